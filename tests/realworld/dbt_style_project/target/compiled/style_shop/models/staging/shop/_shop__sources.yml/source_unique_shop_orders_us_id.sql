
    
    

select
    id as unique_field,
    count(*) as n_records

from "style"."raw"."orders_us"
where id is not null
group by id
having count(*) > 1


