with orders as (

    select * from {{ ref('stg_orders') }}

),

customers as (

    select customer_id, is_test_account from {{ ref('stg_customers') }}

),

order_lines as (

    select
        order_id,
        count(*) as line_count,
        sum(quantity) as item_quantity,
        count(distinct product_id) as distinct_products,
        sum(gross_amount_cents) as gross_amount_cents,
        sum(discount_cents) as discount_cents,
        sum(net_amount_cents) as net_items_cents,
        sum(cost_cents) as cost_cents
    from {{ ref('int_order_items_enriched') }}
    group by order_id

)

select
    o.order_id,
    o.customer_id,
    o.ordered_at,
    o.order_date,
    date_trunc('month', o.ordered_at)::date as order_month,
    o.status,
    o.marketing_channel,
    o.sales_platform,
    o.discount_code,
    coalesce(l.line_count, 0) as line_count,
    coalesce(l.item_quantity, 0) as item_quantity,
    coalesce(l.distinct_products, 0) as distinct_products,
    coalesce(l.gross_amount_cents, 0) as gross_amount_cents,
    coalesce(l.discount_cents, 0) as discount_cents,
    o.shipping_cents,
    coalesce(l.net_items_cents, 0) + o.shipping_cents as order_total_cents,
    coalesce(l.cost_cents, 0) as cost_cents,
    o.status not in ('cancelled', 'returned', 'pending') as is_revenue_order
from orders as o
inner join customers as c
    on o.customer_id = c.customer_id
left join order_lines as l
    on o.order_id = l.order_id
{% if not var('include_test_accounts', false) %}
where c.is_test_account = false
{% endif %}
