select
    order_item_id,
    order_id,
    product_id,
    quantity,
    zeroifnull(discount_pct)::number(5, 2) as discount_pct
from {{ ref('raw_order_items') }}
