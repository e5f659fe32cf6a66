with order_items as (

    select * from {{ ref('int_order_items_enriched') }}

),

orders as (

    select order_id, order_month, is_revenue_order from {{ ref('int_orders_enriched') }}

)

select
    order_items.product_id,
    orders.order_month,
    sum(order_items.quantity) as units_sold,
    count(distinct order_items.order_id) as order_count,
    sum(order_items.net_amount_cents) as revenue_cents,
    sum(order_items.net_amount_cents - order_items.cost_cents) as gross_margin_cents
from order_items
join orders
    on order_items.order_id = orders.order_id
where orders.is_revenue_order
group by order_items.product_id, orders.order_month
