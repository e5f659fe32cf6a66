with orders as (

    select * from {{ ref('int_order_financials') }}

),

sequenced as (

    select
        order_id,
        customer_id,
        ordered_at,
        order_month,
        status,
        net_revenue_cents,
        row_number() over (
            partition by customer_id
            order by ordered_at, order_id
        ) as customer_order_number,
        lag(ordered_at) over (
            partition by customer_id
            order by ordered_at, order_id
        ) as previous_ordered_at,
        lead(ordered_at) over (
            partition by customer_id
            order by ordered_at, order_id
        ) as next_ordered_at,
        sum(net_revenue_cents) over (
            partition by customer_id
            order by ordered_at, order_id
            rows between unbounded preceding and current row
        ) as cumulative_revenue_cents
    from orders

)

select
    order_id,
    customer_id,
    ordered_at,
    order_month,
    status,
    net_revenue_cents,
    customer_order_number,
    customer_order_number = 1 as is_first_order,
    previous_ordered_at,
    next_ordered_at,
    date_diff('day', previous_ordered_at, ordered_at) as days_since_previous_order,
    cumulative_revenue_cents
from sequenced
