with months as (

    select distinct order_month as month_start
    from {{ ref('fct_orders') }}
    where order_month between cast('{{ var("reporting_start_date") }}' as date)
        and cast('{{ var("as_of_date") }}' as date)

),

order_revenue as (

    select
        order_month as month_start,
        'orders' as revenue_stream,
        sum(net_revenue_cents) as revenue_cents,
        count(*) as transactions
    from {{ ref('fct_orders') }}
    group by order_month

),

subscription_revenue as (

    select
        months.month_start,
        'subscriptions' as revenue_stream,
        sum(subscriptions.monthly_price_cents) as revenue_cents,
        count(*) as transactions
    from months
    inner join {{ ref('int_subscription_periods') }} as subscriptions
        on date_trunc('month', subscriptions.started_on) <= months.month_start
        and subscriptions.effective_end_on >= months.month_start
    where subscriptions.subscription_status <> 'paused'
    group by months.month_start

),

revenue_streams as (

    select * from order_revenue
    union all
    select * from subscription_revenue

),

monthly as (

    select
        months.month_start,
        sum(case when revenue_streams.revenue_stream = 'orders' then revenue_streams.revenue_cents else 0 end)
            as order_revenue_cents,
        sum(case when revenue_streams.revenue_stream = 'subscriptions' then revenue_streams.revenue_cents else 0 end)
            as subscription_revenue_cents,
        sum(revenue_streams.revenue_cents) as total_revenue_cents,
        sum(case when revenue_streams.revenue_stream = 'orders' then revenue_streams.transactions else 0 end)
            as order_count
    from months
    inner join revenue_streams
        on months.month_start = revenue_streams.month_start
    group by months.month_start

)

select
    month_start,
    order_count,
    order_revenue_cents,
    subscription_revenue_cents,
    total_revenue_cents,
    {{ cents_to_dollars('total_revenue_cents') }} as total_revenue,
    sum(total_revenue_cents) over (
        order by month_start
        rows between unbounded preceding and current row
    ) as cumulative_revenue_cents,
    lag(total_revenue_cents) over (order by month_start) as previous_month_revenue_cents,
    round(
        100.0 * (total_revenue_cents - lag(total_revenue_cents) over (order by month_start))
        / nullif(lag(total_revenue_cents) over (order by month_start), 0),
        2
    ) as month_over_month_growth_pct
from monthly
