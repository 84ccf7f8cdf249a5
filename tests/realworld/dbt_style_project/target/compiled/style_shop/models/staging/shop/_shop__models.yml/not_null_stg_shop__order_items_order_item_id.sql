
    
    



select order_item_id
from "style"."analytics"."stg_shop__order_items"
where order_item_id is null


