-- depends_on: {{ ref('raw_ad_spend') }}
with source as (

    select * from {{ source('web', 'ad_spend') }}

)

select
    cast(month as date) as spend_month,
    lower(channel) as marketing_channel,
    spend_cents,
    {{ cents_to_dollars('spend_cents') }} as spend,
    impressions,
    clicks
from source
