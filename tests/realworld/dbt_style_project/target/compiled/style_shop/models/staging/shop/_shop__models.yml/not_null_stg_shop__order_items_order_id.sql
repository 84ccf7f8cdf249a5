
    
    



select order_id
from "style"."analytics"."stg_shop__order_items"
where order_id is null


