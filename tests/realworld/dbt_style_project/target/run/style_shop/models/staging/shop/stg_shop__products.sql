
  create view "style"."analytics"."stg_shop__products__dbt_tmp"
    
    
  as (
    with

source as (

    select * from "style"."raw"."products"

),

renamed as (

    select

        ----------  ids
        sku as product_sku,

        ---------- text
        product_name,
        lower(category) as product_category,

        ---------- numerics
        (price_cents::numeric(16, 2) / 100)::numeric(16, 2) as list_price,
        (cost_cents::numeric(16, 2) / 100)::numeric(16, 2) as unit_cost,

        ---------- booleans
        is_active

    from source

)

select * from renamed
  );