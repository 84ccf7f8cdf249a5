
    
    select
      count(*) as failures,
      count(*) != 0 as should_warn,
      count(*) != 0 as should_error
    from (
      
    
  
    
    



select order_id
from "style"."analytics"."int_payments_pivoted_to_orders"
where order_id is null



  
  
      
    ) dbt_internal_test