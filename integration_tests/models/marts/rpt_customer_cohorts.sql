with orders as (

    select customer_id, order_month, net_revenue_cents
    from {{ ref('fct_orders') }}
    where is_revenue_order

),

cohorts as (

    select customer_id, min(order_month) as cohort_month
    from orders
    group by customer_id

),

cohort_sizes as (

    select cohort_month, count(*) as cohort_size
    from cohorts
    group by cohort_month

),

activity as (

    select
        cohorts.cohort_month,
        date_diff('month', cohorts.cohort_month, orders.order_month) as months_since_first_order,
        orders.customer_id,
        orders.net_revenue_cents
    from orders
    inner join cohorts
        on orders.customer_id = cohorts.customer_id

)

select
    activity.cohort_month,
    activity.months_since_first_order,
    cohort_sizes.cohort_size,
    count(distinct activity.customer_id) as active_customers,
    sum(activity.net_revenue_cents) as revenue_cents,
    round(100.0 * count(distinct activity.customer_id) / cohort_sizes.cohort_size, 1) as retention_pct
from activity
inner join cohort_sizes
    on activity.cohort_month = cohort_sizes.cohort_month
where activity.months_since_first_order < 12
group by activity.cohort_month, activity.months_since_first_order, cohort_sizes.cohort_size
having count(distinct activity.customer_id) >= {{ var('min_cohort_size') }}
