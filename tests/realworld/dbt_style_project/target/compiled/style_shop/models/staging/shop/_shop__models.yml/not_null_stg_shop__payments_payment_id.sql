
    
    



select payment_id
from "style"."analytics"."stg_shop__payments"
where payment_id is null


