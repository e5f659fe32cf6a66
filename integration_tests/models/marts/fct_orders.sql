with orders as (

    select * from {{ ref('int_order_financials') }}

),

sequenced as (

    select * from {{ ref('int_customer_orders_sequenced') }}

)

select
    orders.order_id,
    orders.customer_id,
    orders.ordered_at,
    orders.order_date,
    orders.order_month,
    orders.status,
    orders.marketing_channel,
    orders.sales_platform,
    orders.discount_code,
    orders.line_count,
    orders.item_quantity,
    orders.distinct_products,
    orders.gross_amount_cents,
    orders.discount_cents,
    orders.shipping_cents,
    orders.order_total_cents,
    {{ cents_to_dollars('orders.order_total_cents') }} as order_total,
    orders.paid_cents,
    orders.refunded_cents,
    orders.net_revenue_cents,
    {{ cents_to_dollars('orders.net_revenue_cents') }} as net_revenue,
    orders.net_revenue_cents // 100 as net_revenue_whole_dollars,
    orders.balance_due_cents,
    orders.failed_payment_attempts,
    orders.is_revenue_order,
    sequenced.customer_order_number,
    sequenced.is_first_order,
    sequenced.days_since_previous_order,
    sequenced.cumulative_revenue_cents,
    case
        when orders.order_total_cents >= 50000 then 'large'
        when orders.order_total_cents >= 15000 then 'medium'
        when orders.order_total_cents > 0 then 'small'
        else 'empty'
    end as order_size,
    orders.status in ('completed', 'shipped') and orders.balance_due_cents > 0 as is_underpaid
from orders
left join sequenced
    on orders.order_id = sequenced.order_id
    and orders.customer_id = sequenced.customer_id
