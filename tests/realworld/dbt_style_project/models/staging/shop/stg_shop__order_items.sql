with

source as (

    select * from {{ source('shop', 'order_items') }}

),

renamed as (

    select

        ----------  ids
        id as order_item_id,
        order_id,
        sku as product_sku,

        ---------- numerics
        quantity,
        {{ cents_to_dollars('unit_price_cents') }} as unit_price

    from source

)

select * from renamed
