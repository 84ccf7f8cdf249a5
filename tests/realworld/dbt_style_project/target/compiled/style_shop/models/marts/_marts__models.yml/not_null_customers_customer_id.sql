
    
    



select customer_id
from "style"."analytics"."customers"
where customer_id is null


