
  
    

  create  table "style"."analytics"."order_features__dbt_tmp"
  
  
    as
  
  (
    -- One row per order with the features the ML models (basket value, churn,
-- fraud) read. Keep the grain at order_id.

with

 __dbt__cte__int_order_items_summarized as (


with

order_items as (

    select * from "style"."analytics"."stg_shop__order_items"

),

products as (

    select * from "style"."analytics"."stg_shop__products"

),

order_items_with_costs as (

    select
        order_items.order_id,
        order_items.quantity,
        order_items.unit_price,
        -- discontinued products are deleted from the catalog, so cost can be missing
        products.unit_cost,
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
), orders as (

    select * from "style"."analytics"."int_orders_joined_to_customers"

),

order_items as (

    select * from __dbt__cte__int_order_items_summarized

),

payments as (

    select * from "style"."analytics"."int_payments_pivoted_to_orders"

),

orders_in_usd as (

    select
        *,
        case
            when currency_code = 'EUR' then 1.08
            else 1.0
        end as fx_rate_to_usd

    from orders

),

order_amounts as (

    select
        order_id,
        fx_rate_to_usd,
        (subtotal - coalesce(discount_amount, 0) + coalesce(shipping_amount, 0))
            * fx_rate_to_usd as order_total_usd,
        coalesce(discount_amount, 0) / nullif(subtotal, 0) as discount_rate,
        coalesce(discount_amount, 0) > 0 as has_discount

    from orders_in_usd

),

customer_history as (

    select
        order_id,

        case when customer_id is not null then
            row_number() over (
                partition by customer_id
                order by ordered_at, order_id
            )
        end as customer_order_number,

        case when customer_id is not null then
            extract(epoch from (
                ordered_at - lag(ordered_at) over (
                    partition by customer_id
                    order by ordered_at, order_id
                )
            )) / 86400.0
        end as days_since_previous_order

    from orders

),

order_baskets as (

    select
        order_items.order_id,
        order_items.units,
        order_items.items_revenue * orders_in_usd.fx_rate_to_usd
            / nullif(order_items.units, 0) as avg_unit_price_usd,
        (order_items.items_revenue - order_items.items_cost)
            / nullif(order_items.items_revenue, 0) as gross_margin_rate

    from order_items

    inner join orders_in_usd
        on order_items.order_id = orders_in_usd.order_id

),

final as (

    select
        ---------- keys
        orders.order_id,
        orders.customer_id,
        orders.ordered_at,

        ---------- order value
        orders.region,
        round(order_amounts.order_total_usd, 2)::numeric(16, 2) as order_total_usd,
        round(coalesce(order_amounts.discount_rate, 0), 4)::numeric(8, 4) as discount_rate,
        order_amounts.has_discount,
        case
            when order_amounts.order_total_usd < 25 then 'small'
            when order_amounts.order_total_usd < 100 then 'medium'
            when order_amounts.order_total_usd < 250 then 'large'
            else 'xl'
        end as order_size_bucket,

        ---------- basket
        coalesce(order_baskets.units, 0) as units,
        round(order_baskets.avg_unit_price_usd, 2)::numeric(16, 2) as avg_unit_price_usd,
        round(order_baskets.gross_margin_rate, 4)::numeric(8, 4) as gross_margin_rate,

        ---------- payment
        coalesce(payments.gift_card_amount, 0) > 0 as paid_with_gift_card,

        ---------- time
        extract(isodow from orders.ordered_at)::int as order_day_of_week,
        case
            when extract(isodow from orders.ordered_at) in (6, 7) then 1
            else 0
        end as is_weekend,

        ---------- customer
        customer_history.customer_order_number,
        round(customer_history.days_since_previous_order::numeric, 2) as days_since_previous_order,
        date_part('day', orders.ordered_at - orders.signed_up_at)::int as customer_tenure_days,
        coalesce(orders.loyalty_tier, 'guest') as loyalty_tier

    from orders

    left join order_amounts
        on orders.order_id = order_amounts.order_id

    left join order_baskets
        on orders.order_id = order_baskets.order_id

    left join payments
        on orders.order_id = payments.order_id

    left join customer_history
        on orders.order_id = customer_history.order_id

)

select * from final
  );
  