with order_items as (

    select * from {{ ref('int_order_items_enriched') }}

),

orders as (

    select order_id, customer_id, order_date, order_month, status from {{ ref('int_orders_enriched') }}

)

select
    order_items.order_item_id,
    order_items.order_id,
    orders.customer_id,
    orders.order_date,
    orders.order_month,
    orders.status as order_status,
    order_items.product_id,
    order_items.product_name,
    order_items.category,
    order_items.quantity,
    {{ cents_to_dollars('order_items.unit_price_cents') }} as unit_price,
    order_items.gross_amount_cents,
    order_items.discount_cents,
    order_items.net_amount_cents,
    order_items.cost_cents,
    cast((order_items.net_amount_cents - order_items.cost_cents) / 100.0 as decimal(18, 2)) as gross_margin,
    nullif(order_items.discount_cents, 0) is not null as is_discounted
from order_items
join orders
    on order_items.order_id = orders.order_id
