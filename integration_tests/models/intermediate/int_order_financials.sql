{%- set methods = var('payment_methods') -%}

with orders as (

    select * from {{ ref('int_orders_enriched') }}

),

payments as (

    select * from {{ ref('int_order_payments') }}

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
    orders.cost_cents,
    orders.is_revenue_order,
    {% for method in methods %}
    coalesce(payments.{{ method }}_cents, 0) as {{ method }}_cents,
    {% endfor %}
    coalesce(payments.other_method_cents, 0) as other_method_cents,
    coalesce(payments.paid_cents, 0) as paid_cents,
    coalesce(payments.refunded_cents, 0) as refunded_cents,
    coalesce(payments.paid_cents, 0) - coalesce(payments.refunded_cents, 0) as net_revenue_cents,
    orders.order_total_cents - coalesce(payments.paid_cents, 0) as balance_due_cents,
    coalesce(payments.failed_attempts, 0) as failed_payment_attempts,
    payments.first_paid_at,
    payments.last_refunded_at
from orders
left join payments
    on orders.order_id = payments.order_id
