
    
    



select order_id
from "style"."analytics"."int_orders_joined_to_customers"
where order_id is null


