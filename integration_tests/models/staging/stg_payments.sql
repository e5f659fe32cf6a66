-- depends_on: {{ ref('raw_payments') }}
with source as (

    select * from {{ source('shop', 'payments') }}

)

select
    payment_id,
    order_id,
    lower(trim(payment_method)) as payment_method,
    lower(payment_status) as payment_status,
    amount_cents,
    {{ cents_to_dollars('amount_cents') }} as amount,
    cast(created_at as timestamp) as created_at
from source
-- gateway timeouts are logged without an amount
where amount_cents is not null
