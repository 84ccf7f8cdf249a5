
    
    



select region
from "style"."analytics"."stg_shop__orders"
where region is null


