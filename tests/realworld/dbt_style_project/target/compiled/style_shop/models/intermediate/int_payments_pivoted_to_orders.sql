with

payments as (

    select * from "style"."analytics"."stg_shop__payments"

),

successful_payments as (

    select * from payments
    where payment_status = 'success'

),

pivoted as (

    select
        order_id,

        sum(case when payment_method = 'credit_card' then amount else 0 end)
            as credit_card_amount,
        sum(case when payment_method = 'paypal' then amount else 0 end)
            as paypal_amount,
        sum(case when payment_method = 'bank_transfer' then amount else 0 end)
            as bank_transfer_amount,
        sum(case when payment_method = 'gift_card' then amount else 0 end)
            as gift_card_amount,
        sum(amount) as total_amount

    from successful_payments

    group by 1

)

select * from pivoted