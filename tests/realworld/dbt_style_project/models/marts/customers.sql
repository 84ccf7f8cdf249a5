with

customers as (

    select * from {{ ref('stg_shop__customers') }}

),

orders as (

    select * from {{ ref('stg_shop__orders') }}

),

customer_orders as (

    select
        customer_id,

        min(ordered_at) as first_ordered_at,
        max(ordered_at) as most_recent_ordered_at,
        count(order_id) as number_of_orders

    from orders

    where order_status not in ('cancelled', 'returned')

    group by 1

),

final as (

    select
        customers.customer_id,
        customers.first_name,
        customers.last_name,
        customers.loyalty_tier,
        customers.signed_up_at,
        customer_orders.first_ordered_at,
        customer_orders.most_recent_ordered_at,
        coalesce(customer_orders.number_of_orders, 0) as number_of_orders,
        customer_orders.customer_id is not null as is_buyer

    from customers

    left join customer_orders
        on customers.customer_id = customer_orders.customer_id

)

select * from final
