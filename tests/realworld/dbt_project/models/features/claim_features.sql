select
    claim_id,
    claim_amount,
    insured_value,
    claim_amount / insured_value as amount_ratio,
    ln(claim_amount) as log_amount,
    round(claim_amount, -2) as amount_rounded,
    category,
    case when category in ('a', 'b') then 'low' when category = 'c' then 'mid' else 'high' end as category_bucket,
    coalesce(region, 'unknown') as region,
    is_fraud,
    severity
from {{ ref('stg_claims') }}
