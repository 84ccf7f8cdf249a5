{%- set payment_methods = ['credit_card', 'paypal', 'bank_transfer', 'gift_card'] -%}

with

payments as (

    select * from {{ ref('stg_shop__payments') }}

),

successful_payments as (

    select * from payments
    where payment_status = 'success'

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
