
    
    

with all_values as (

    select
        region as value_field,
        count(*) as n_records

    from "style"."analytics"."stg_shop__orders"
    group by region

)

select *
from all_values
where value_field not in (
    'eu','us'
)


