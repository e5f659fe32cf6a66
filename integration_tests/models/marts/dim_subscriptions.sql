with subscriptions as (

    select * from {{ ref('int_subscription_periods') }}

),

customers as (

    select customer_id, customer_segment, region from {{ ref('dim_customers') }}

)

select
    subscriptions.subscription_id,
    subscriptions.customer_id,
    customers.customer_segment,
    customers.region,
    subscriptions.plan_name,
    subscriptions.subscription_status,
    {{ cents_to_dollars('subscriptions.monthly_price_cents') }} as monthly_price,
    subscriptions.started_on,
    subscriptions.trial_ends_on,
    subscriptions.cancelled_on,
    subscriptions.tenure_months,
    subscriptions.current_mrr_cents,
    subscriptions.is_churned,
    subscriptions.monthly_price_cents * greatest(subscriptions.tenure_months, 1) as lifetime_billed_cents,
    case
        when subscriptions.is_churned and subscriptions.cancelled_on <= subscriptions.trial_ends_on then 'churned_in_trial'
        when subscriptions.is_churned then 'churned'
        when subscriptions.subscription_status = 'paused' then 'paused'
        when subscriptions.tenure_months >= 12 then 'tenured'
        else 'active'
    end as lifecycle_stage
from subscriptions
inner join customers
    on subscriptions.customer_id = customers.customer_id
