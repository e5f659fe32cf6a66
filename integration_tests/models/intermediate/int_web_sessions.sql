with events as (

    select * from {{ ref('stg_web_events') }}

),

sessions as (

    select
        session_id,
        max(customer_id) as customer_id,
        min(event_at) as session_started_at,
        max(event_at) as session_ended_at,
        max(device_type) as device_type,
        max(utm_source) as utm_source,
        count(*) as event_count,
        count(distinct page_url) as distinct_pages,
        sum(case when event_type = 'product_view' then 1 else 0 end) as product_views,
        max(case when event_type = 'add_to_cart' then 1 else 0 end) as added_to_cart,
        max(case when event_type = 'checkout_started' then 1 else 0 end) as started_checkout,
        max(case when event_type = 'purchase' then 1 else 0 end) as purchased
    from events
    group by session_id

)

select
    session_id,
    customer_id,
    session_started_at,
    session_ended_at,
    session_started_at::date as session_date,
    device_type,
    utm_source,
    event_count,
    distinct_pages,
    product_views,
    date_diff('second', session_started_at, session_ended_at) as duration_seconds,
    date_diff('second', session_started_at, session_ended_at) // 60 as duration_minutes,
    added_to_cart = 1 as added_to_cart,
    started_checkout = 1 as started_checkout,
    purchased = 1 as converted,
    case
        when purchased = 1 then 'purchase'
        when started_checkout = 1 then 'checkout'
        when added_to_cart = 1 then 'cart'
        when product_views > 0 then 'browse'
        else 'bounce'
    end as funnel_stage
from sessions
