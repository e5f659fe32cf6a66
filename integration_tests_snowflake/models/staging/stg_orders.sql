-- raw_orders receives a new row every time an order changes; keep the latest version only
select
    order_id,
    customer_id,
    ordered_at_utc,
    convert_timezone('UTC', 'America/New_York', ordered_at_utc) as ordered_at_local,
    lower(status) as status,
    iff(status ilike 'completed' or status ilike 'shipped', true, false) as is_fulfilled,
    iff(status ilike 'returned', true, false) as is_returned,
    nvl(try_to_number(shipping_fee, 10, 2), 0) as shipping_fee,
    nullif(coupon_code, '') as coupon_code,
    shipped_at_utc
from {{ ref('raw_orders') }}
qualify row_number() over (partition by order_id order by _loaded_at desc) = 1
