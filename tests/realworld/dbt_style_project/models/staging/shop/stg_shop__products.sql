with

source as (

    select * from {{ source('shop', 'products') }}

),

renamed as (

    select

        ----------  ids
        sku as product_sku,

        ---------- text
        product_name,
        lower(category) as product_category,

        ---------- numerics
        {{ cents_to_dollars('price_cents') }} as list_price,
        {{ cents_to_dollars('cost_cents') }} as unit_cost,

        ---------- booleans
        is_active

    from source

)

select * from renamed
