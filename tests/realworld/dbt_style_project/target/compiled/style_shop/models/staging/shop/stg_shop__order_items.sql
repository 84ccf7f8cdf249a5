with

source as (

    select * from "style"."raw"."order_items"

),

renamed as (

    select

        ----------  ids
        id as order_item_id,
        order_id,
        sku as product_sku,

        ---------- numerics
        quantity,
        (unit_price_cents::numeric(16, 2) / 100)::numeric(16, 2) as unit_price

    from source

)

select * from renamed