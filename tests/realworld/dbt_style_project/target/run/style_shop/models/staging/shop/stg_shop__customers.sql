
  create view "style"."analytics"."stg_shop__customers__dbt_tmp"
    
    
  as (
    with

source as (

    select * from "style"."raw"."customers"

),

renamed as (

    select

        ----------  ids
        id as customer_id,

        ---------- text
        first_name,
        last_name,
        lower(email) as email,
        upper(country_code) as country_code,
        coalesce(loyalty_tier, 'none') as loyalty_tier,

        ---------- booleans
        coalesce(marketing_opt_in, false) as is_marketing_opt_in,

        ---------- timestamps
        cast(created_at as timestamp) as signed_up_at

    from source

)

select * from renamed
  );