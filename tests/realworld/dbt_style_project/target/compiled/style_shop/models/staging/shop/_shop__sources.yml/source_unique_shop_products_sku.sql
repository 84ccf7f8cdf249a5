
    
    

select
    sku as unique_field,
    count(*) as n_records

from "style"."raw"."products"
where sku is not null
group by sku
having count(*) > 1


