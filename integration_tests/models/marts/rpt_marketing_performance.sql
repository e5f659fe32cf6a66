with channel_orders as (

    select * from {{ ref('int_channel_monthly_orders') }}

),

spend as (

    select * from {{ ref('stg_ad_spend') }}

),

joined as (

    select
        coalesce(channel_orders.marketing_channel, spend.marketing_channel) as marketing_channel,
        coalesce(channel_orders.order_month, spend.spend_month) as month_start,
        coalesce(channel_orders.order_count, 0) as order_count,
        coalesce(channel_orders.first_order_count, 0) as new_customers,
        coalesce(channel_orders.net_revenue_cents, 0) as net_revenue_cents,
        coalesce(spend.spend_cents, 0) as spend_cents,
        coalesce(spend.impressions, 0) as impressions,
        coalesce(spend.clicks, 0) as clicks,
        spend.spend_cents is null as is_unpaid_channel
    from channel_orders
    full outer join spend
        on channel_orders.marketing_channel = spend.marketing_channel
        and channel_orders.order_month = spend.spend_month

)

select
    marketing_channel,
    month_start,
    order_count,
    new_customers,
    net_revenue_cents,
    spend_cents,
    impressions,
    clicks,
    round(net_revenue_cents / nullif(spend_cents, 0), 2) as return_on_ad_spend,
    {{ cents_to_dollars('spend_cents / nullif(new_customers, 0)') }} as cost_per_new_customer,
    round(100.0 * clicks / nullif(impressions, 0), 3) as click_through_rate_pct,
    case
        when is_unpaid_channel then 'unpaid'
        when order_count = 0 then 'spend_without_orders'
        when net_revenue_cents >= spend_cents then 'profitable'
        else 'unprofitable'
    end as performance_band
from joined
where marketing_channel <> 'direct'
