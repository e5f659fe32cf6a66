with orders as (

    select * from {{ ref('stg_orders') }}

),

lines as (

    select
        order_id,
        count(*) as line_count,
        sum(quantity) as units,
        sum(gross_amount) as gross_amount,
        sum(discount_amount) as discount_amount,
        array_size(array_agg(distinct category))::number(38, 0) as category_count,
        listagg(distinct category, ', ') within group (order by category) as categories
    from {{ ref('int_order_lines') }}
    group by order_id

)

select
    orders.order_id,
    orders.customer_id,
    orders.ordered_at_local::date as order_date,
    orders.status,
    orders.is_fulfilled,
    orders.is_returned,
    orders.coupon_code,
    zeroifnull(lines.line_count)::number(38, 0) as line_count,
    zeroifnull(lines.units)::number(38, 0) as units,
    zeroifnull(lines.gross_amount)::number(12, 2) as gross_amount,
    zeroifnull(lines.discount_amount)::number(12, 2) as discount_amount,
    (zeroifnull(lines.gross_amount) - zeroifnull(lines.discount_amount) + orders.shipping_fee)::number(12, 2) as net_amount,
    orders.shipping_fee,
    div0(lines.discount_amount, lines.gross_amount)::number(10, 4) as discount_rate,
    datediff(day, orders.ordered_at_utc, orders.shipped_at_utc) as days_to_ship,
    dateadd(day, 30, orders.ordered_at_local::date)::date as payment_due_date,
    zeroifnull(lines.category_count)::number(38, 0) as category_count,
    lines.categories
from orders
left join lines
    on orders.order_id = lines.order_id
