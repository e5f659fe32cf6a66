with subscriptions as (

    select * from {{ ref('stg_subscriptions') }}

)

select
    subscription_id,
    customer_id,
    plan_name,
    subscription_status,
    monthly_price_cents,
    started_on,
    cancelled_on,
    (started_on + interval 30 day)::date as trial_ends_on,
    coalesce(cancelled_on, cast('{{ var("as_of_date") }}' as date)) as effective_end_on,
    date_diff('month', started_on, coalesce(cancelled_on, cast('{{ var("as_of_date") }}' as date))) as tenure_months,
    case
        when cancelled_on is null and subscription_status = 'active' then monthly_price_cents
        else 0
    end as current_mrr_cents,
    cancelled_on is not null as is_churned
from subscriptions
