with sales as (

    select
        product_id,
        count(distinct order_id) as orders,
        sum(quantity) as units_sold,
        sum(iff(is_returned, quantity, 0)) as units_returned,
        sum(gross_amount - discount_amount) as net_revenue
    from {{ ref('int_order_lines') }}
    where status not ilike 'cancel%'
    group by product_id

),

interest as (

    select
        product_id,
        count_if(event_type = 'add_to_cart') as add_to_cart_events,
        count_if(event_type = 'wishlist') as wishlist_events
    from {{ ref('int_event_items') }}
    group by product_id

)

select
    products.product_id,
    products.product_name,
    products.category,
    products.subcategory,
    products.is_active,
    zeroifnull(sales.orders)::number(38, 0) as orders,
    zeroifnull(sales.units_sold)::number(38, 0) as units_sold,
    zeroifnull(sales.units_returned)::number(38, 0) as units_returned,
    zeroifnull(sales.net_revenue)::number(12, 2) as net_revenue,
    div0(sales.units_returned, sales.units_sold)::number(10, 4) as return_rate,
    zeroifnull(interest.add_to_cart_events)::number(38, 0) as add_to_cart_events,
    zeroifnull(interest.wishlist_events)::number(38, 0) as wishlist_events,
    row_number() over (
        partition by products.category
        order by zeroifnull(sales.net_revenue) desc, products.product_id
    ) as category_rank
from {{ ref('stg_products') }} as products
left join sales
    on products.product_id = sales.product_id
left join interest
    on products.product_id = interest.product_id
