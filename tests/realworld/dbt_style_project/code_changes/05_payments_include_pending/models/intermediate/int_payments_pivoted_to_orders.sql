{%- set payment_methods = ['credit_card', 'paypal', 'bank_transfer', 'gift_card'] -%}

with

payments as (

    select * from {{ ref('stg_shop__payments') }}

),

successful_payments as (

    select * from payments
    -- pending authorisations almost always settle, count them as paid
    where payment_status in ('success', 'pending')

),

pivoted as (

    select
        order_id,

        {% for payment_method in payment_methods -%}
        sum(case when payment_method = '{{ payment_method }}' then amount else 0 end)
            as {{ payment_method }}_amount,
        {% endfor -%}

        sum(amount) as total_amount

    from successful_payments

    group by 1

)

select * from pivoted
