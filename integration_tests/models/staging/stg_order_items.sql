-- depends_on: {{ ref('raw_order_items') }}
with source as (

    select * from {{ source('shop', 'order_items') }}

)

select
    order_item_id,
    order_id,
    product_id,
    quantity,
    unit_price_cents,
    coalesce(discount_cents, 0) as discount_cents,
    quantity * unit_price_cents as gross_amount_cents
from source
-- the POS integration occasionally sends zero-quantity lines
where quantity > 0
