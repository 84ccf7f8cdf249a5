
  create view "style"."analytics"."stg_shop__orders__dbt_tmp"
    
    
  as (
    -- The EU and US storefronts run on separate databases with the same schema.
-- Order ids come from one platform-wide sequence, so they never collide.

with

orders_eu as (

    select * from "style"."raw"."orders_eu"

),

orders_us as (

    select * from "style"."raw"."orders_us"

),

unioned as (

    select
        'eu' as region,
        id,
        customer_id,
        ordered_at,
        status,
        currency_code,
        channel,
        subtotal_cents,
        shipping_cents,
        discount_cents
    from orders_eu

    union all

    select
        'us' as region,
        id,
        customer_id,
        ordered_at,
        status,
        currency_code,
        channel,
        subtotal_cents,
        shipping_cents,
        discount_cents
    from orders_us

),

renamed as (

    select

        ----------  ids
        id as order_id,
        customer_id,

        ---------- text
        region,
        status as order_status,
        upper(currency_code) as currency_code,
        channel as sales_channel,

        ---------- numerics
        (subtotal_cents::numeric(16, 2) / 100)::numeric(16, 2) as subtotal,
        (shipping_cents::numeric(16, 2) / 100)::numeric(16, 2) as shipping_amount,
        (discount_cents::numeric(16, 2) / 100)::numeric(16, 2) as discount_amount,

        ---------- timestamps
        cast(ordered_at as timestamp) as ordered_at

    from unioned

)

select * from renamed
  );