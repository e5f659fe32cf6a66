with items as (

    select * from {{ ref('stg_order_items') }}

),

products as (

    select * from {{ ref('stg_products') }}

),

orders as (

    select * from {{ ref('stg_orders') }}

)

select
    items.order_item_id,
    items.order_id,
    orders.customer_id,
    items.product_id,
    products.category,
    products.subcategory,
    items.quantity,
    nvl(products.list_price, 0) as unit_price,
    (items.quantity * nvl(products.list_price, 0))::number(12, 2) as gross_amount,
    (items.quantity * nvl(products.list_price, 0) * items.discount_pct)::number(12, 2) as discount_amount,
    nvl2(orders.coupon_code, 'coupon', 'full_price') as price_type,
    orders.status,
    orders.is_returned
from items
inner join orders
    on items.order_id = orders.order_id
left join products
    on items.product_id = products.product_id
