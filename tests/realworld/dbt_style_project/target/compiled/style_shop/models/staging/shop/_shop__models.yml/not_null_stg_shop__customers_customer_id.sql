
    
    



select customer_id
from "style"."analytics"."stg_shop__customers"
where customer_id is null


