{{ config(materialized='ephemeral') }}

select
    oi.order_item_id,
    oi.order_id,
    oi.product_id,
    p.product_name,
    p.category,
    oi.quantity,
    oi.unit_price_cents,
    oi.discount_cents,
    oi.gross_amount_cents,
    oi.gross_amount_cents - oi.discount_cents as net_amount_cents,
    oi.quantity * p.unit_cost_cents as cost_cents
from {{ ref('stg_order_items') }} as oi
inner join {{ ref('stg_products') }} as p
    on oi.product_id = p.product_id
