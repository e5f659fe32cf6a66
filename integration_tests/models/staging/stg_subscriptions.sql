-- depends_on: {{ ref('raw_subscriptions') }}
with source as (

    select * from {{ source('shop', 'subscriptions') }}

)

select
    subscription_id,
    customer_id,
    lower(plan) as plan_name,
    lower(status) as subscription_status,
    monthly_price_cents,
    {{ cents_to_dollars('monthly_price_cents') }} as monthly_price,
    cast(started_at as timestamp) as started_at,
    started_at::date as started_on,
    cancelled_at::date as cancelled_on,
    cast(updated_at as timestamp) as updated_at
from source
