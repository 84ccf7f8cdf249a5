
    
    



select id
from "style"."raw"."customers"
where id is null


