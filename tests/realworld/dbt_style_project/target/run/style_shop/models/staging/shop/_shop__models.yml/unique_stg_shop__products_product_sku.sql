
    
    select
      count(*) as failures,
      count(*) != 0 as should_warn,
      count(*) != 0 as should_error
    from (
      
    
  
    
    

select
    product_sku as unique_field,
    count(*) as n_records

from "style"."analytics"."stg_shop__products"
where product_sku is not null
group by product_sku
having count(*) > 1



  
  
      
    ) dbt_internal_test