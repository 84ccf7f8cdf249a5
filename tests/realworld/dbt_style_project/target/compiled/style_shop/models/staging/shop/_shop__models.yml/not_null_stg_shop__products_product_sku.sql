
    
    



select product_sku
from "style"."analytics"."stg_shop__products"
where product_sku is null


