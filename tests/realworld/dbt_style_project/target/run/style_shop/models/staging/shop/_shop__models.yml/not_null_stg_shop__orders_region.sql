
    
    select
      count(*) as failures,
      count(*) != 0 as should_warn,
      count(*) != 0 as should_error
    from (
      
    
  
    
    



select region
from "style"."analytics"."stg_shop__orders"
where region is null



  
  
      
    ) dbt_internal_test