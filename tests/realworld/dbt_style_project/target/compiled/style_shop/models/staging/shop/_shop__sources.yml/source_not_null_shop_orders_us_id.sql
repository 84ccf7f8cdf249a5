
    
    



select id
from "style"."raw"."orders_us"
where id is null


