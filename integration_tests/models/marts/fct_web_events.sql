{{
    config(
        materialized='incremental',
        unique_key='event_id',
        on_schema_change='append_new_columns'
    )
}}

with events as (

    select * from {{ ref('stg_web_events') }}
    {% if is_incremental() %}
    -- only events newer than the latest one already loaded
    where event_at > (select max(event_at) from {{ this }})
    {% endif %}

)

select
    event_id,
    session_id,
    customer_id,
    event_type,
    page_url,
    case
        when page_url like '/products/%' then upper(replace(page_url, '/products/', ''))
    end as product_sku,
    event_at,
    event_at::date as event_date,
    date_trunc('month', event_at)::date as event_month,
    device_type,
    utm_source,
    event_type in ('add_to_cart', 'checkout_started', 'purchase') as is_funnel_event
from events
