select
    claim_id,
    amount as claim_amount,
    insured_value::double precision as insured_value,
    category,
    region,
    is_fraud,
    severity
from {{ source('raw', 'claims') }}
