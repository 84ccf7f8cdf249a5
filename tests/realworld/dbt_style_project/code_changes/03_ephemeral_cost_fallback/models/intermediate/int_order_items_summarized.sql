{{
    config(
        materialized='ephemeral'
    )
}}

with

order_items as (

    select * from {{ ref('stg_shop__order_items') }}

),

products as (

    select * from {{ ref('stg_shop__products') }}

),

order_items_with_costs as (

    select
        order_items.order_id,
        order_items.quantity,
        order_items.unit_price,
        -- discontinued products are deleted from the catalog, so cost can be missing;
        -- book those lines at cost = price (zero margin) instead of skipping them
        coalesce(products.unit_cost, order_items.unit_price) as unit_cost,
        products.product_category

    from order_items

    left join products
        on order_items.product_sku = products.product_sku

),

summarized as (

    select
        order_id,

        count(*) as line_count,
        sum(quantity) as units,
        sum(quantity * unit_price) as items_revenue,
        sum(quantity * unit_cost) as items_cost,
        count(distinct product_category) as distinct_categories

    from order_items_with_costs

    group by 1

)

select * from summarized
