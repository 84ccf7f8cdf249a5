
    
    select
      count(*) as failures,
      count(*) != 0 as should_warn,
      count(*) != 0 as should_error
    from (
      
    
  
    
    



select product_sku
from "style"."analytics"."stg_shop__products"
where product_sku is null



  
  
      
    ) dbt_internal_test