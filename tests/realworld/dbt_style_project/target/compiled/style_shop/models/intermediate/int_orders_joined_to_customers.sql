with

orders as (

    select * from "style"."analytics"."stg_shop__orders"

),

customers as (

    select * from "style"."analytics"."stg_shop__customers"

),

joined as (

    select
        orders.order_id,
        orders.region,
        orders.order_status,
        orders.currency_code,
        orders.sales_channel,
        orders.subtotal,
        orders.shipping_amount,
        orders.discount_amount,
        orders.ordered_at,
        customers.*

    from orders

    left join customers
        on orders.customer_id = customers.customer_id

)

select * from joined