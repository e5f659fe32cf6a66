-- one row per customer and month in which they either ordered or visited the site logged in
select
    customer_id,
    order_month as activity_month
from {{ ref('int_orders_enriched') }}

union

select
    customer_id,
    date_trunc('month', session_started_at)::date as activity_month
from {{ ref('int_web_sessions') }}
where customer_id is not null
