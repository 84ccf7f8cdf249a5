
    
    



select order_id
from "style"."analytics"."stg_shop__orders"
where order_id is null


