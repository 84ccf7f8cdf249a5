
    
    



select id
from "style"."raw"."orders_eu"
where id is null


