with sessions as (

    select * from {{ ref('int_web_sessions') }}

),

customers as (

    select customer_id, customer_segment, region, customer_tier from {{ ref('dim_customers') }}

)

select
    sessions.session_id,
    sessions.customer_id,
    sessions.customer_id is not null as is_identified,
    coalesce(customers.customer_segment, 'anonymous') as customer_segment,
    coalesce(customers.region, 'Unknown') as region,
    customers.customer_tier,
    sessions.session_started_at,
    sessions.session_date,
    date_trunc('month', sessions.session_started_at)::date as session_month,
    sessions.device_type,
    sessions.utm_source,
    sessions.event_count,
    sessions.distinct_pages,
    sessions.product_views,
    sessions.duration_seconds,
    sessions.duration_minutes,
    sessions.funnel_stage,
    sessions.converted,
    sessions.event_count = 1 as is_bounce
from sessions
left join customers
    on sessions.customer_id = customers.customer_id
