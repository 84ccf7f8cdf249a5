with

source as (

    select * from "style"."raw"."payments"

),

renamed as (

    select

        ----------  ids
        id as payment_id,
        order_id,

        ---------- text
        lower(payment_method) as payment_method,
        status as payment_status,

        ---------- numerics
        (amount_cents::numeric(16, 2) / 100)::numeric(16, 2) as amount,

        ---------- timestamps
        cast(created_at as timestamp) as created_at

    from source

)

select * from renamed