
    
    



select sku
from "style"."raw"."products"
where sku is null


