
    
    



select order_id
from "style"."analytics"."int_payments_pivoted_to_orders"
where order_id is null


