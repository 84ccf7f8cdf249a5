with

source as (

    select * from {{ source('shop', 'payments') }}

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
        {{ cents_to_dollars('amount_cents') }} as amount,

        ---------- timestamps
        cast(created_at as timestamp) as created_at

    from source

)

select * from renamed
