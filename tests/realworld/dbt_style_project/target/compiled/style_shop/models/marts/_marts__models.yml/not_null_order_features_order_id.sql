
    
    



select order_id
from "style"."analytics"."order_features"
where order_id is null


