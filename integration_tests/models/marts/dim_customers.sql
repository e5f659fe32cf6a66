with customers as (

    select * from {{ ref('stg_customers') }}

),

countries as (

    select * from {{ ref('stg_countries') }}

),

order_history as (

    select * from {{ ref('int_customer_order_history') }}

),

subscriptions as (

    select
        customer_id,
        count(*) as subscription_count,
        max(case when is_churned = false then plan_name end) as current_plan,
        sum(current_mrr_cents) as current_mrr_cents
    from {{ ref('int_subscription_periods') }}
    group by customer_id

),

web_sessions as (

    select
        customer_id,
        count(*) as web_session_count,
        max(session_started_at) as last_seen_at
    from {{ ref('int_web_sessions') }}
    where customer_id is not null
    group by customer_id

),

joined as (

    select
        customers.customer_id,
        customers.first_name,
        customers.last_name,
        customers.first_name || ' ' || customers.last_name as full_name,
        customers.email,
        customers.country_code,
        coalesce(countries.country_name, 'Unknown') as country_name,
        coalesce(countries.region, 'Unknown') as region,
        customers.customer_segment,
        customers.referral_source,
        customers.signup_date,
        coalesce(order_history.order_count, 0) as order_count,
        coalesce(order_history.revenue_order_count, 0) as revenue_order_count,
        coalesce(order_history.completed_order_count, 0) as completed_order_count,
        coalesce(order_history.active_months, 0) as active_months,
        coalesce(order_history.lifetime_revenue_cents, 0) as lifetime_revenue_cents,
        {{ cents_to_dollars('coalesce(order_history.lifetime_revenue_cents, 0)') }} as lifetime_revenue,
        {{ cents_to_dollars('order_history.avg_order_value_cents') }} as avg_order_value,
        order_history.first_ordered_at,
        order_history.last_ordered_at,
        date_diff(
            'day', order_history.last_ordered_at::date, cast('{{ var("as_of_date") }}' as date)
        ) as days_since_last_order,
        coalesce(order_history.customer_lifespan_days, 0) // 7 as customer_lifespan_weeks,
        coalesce(subscriptions.subscription_count, 0) as subscription_count,
        subscriptions.current_plan,
        coalesce(subscriptions.current_mrr_cents, 0) as current_mrr_cents,
        coalesce(web_sessions.web_session_count, 0) as web_session_count,
        web_sessions.last_seen_at,
        customers.is_test_account
    from customers
    left join countries
        on customers.country_code = countries.country_code
    left join order_history
        on customers.customer_id = order_history.customer_id
    left join subscriptions
        on customers.customer_id = subscriptions.customer_id
    left join web_sessions
        on customers.customer_id = web_sessions.customer_id

)

select
    *,
    case
        when order_count = 0 then 'prospect'
        when lifetime_revenue_cents >= {{ var('high_value_threshold_dollars') }} * 100 then 'vip'
        when completed_order_count >= 3 and (current_mrr_cents > 0 or active_months >= 3) then 'loyal'
        when days_since_last_order > {{ var('churn_after_days') }} then 'lapsed'
        else 'active'
    end as customer_tier
from joined
{% if not var('include_test_accounts', false) %}
where is_test_account = false
{% endif %}
