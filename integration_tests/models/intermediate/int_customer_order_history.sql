with orders as (

    select * from {{ ref('int_order_financials') }}

)

select
    customer_id,
    count(*) as order_count,
    count(case when is_revenue_order then order_id end) as revenue_order_count,
    count(case when status = 'completed' then order_id end) as completed_order_count,
    count(distinct order_month) as active_months,
    sum(net_revenue_cents) as lifetime_revenue_cents,
    avg(case when is_revenue_order then net_revenue_cents end) as avg_order_value_cents,
    min(ordered_at) as first_ordered_at,
    max(ordered_at) as last_ordered_at,
    max(order_total_cents) as largest_order_cents,
    sum(refunded_cents) as lifetime_refunded_cents,
    date_diff('day', min(ordered_at), max(ordered_at)) as customer_lifespan_days
from orders
group by customer_id
