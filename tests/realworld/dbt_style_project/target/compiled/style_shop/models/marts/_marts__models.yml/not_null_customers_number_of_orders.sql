
    
    



select number_of_orders
from "style"."analytics"."customers"
where number_of_orders is null


