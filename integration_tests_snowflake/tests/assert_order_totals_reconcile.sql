-- net revenue of all orders equals line amounts minus discounts plus shipping
with orders as (
    select sum(net_amount) as net_total, sum(shipping_fee) as shipping_total from {{ ref('fct_orders') }}
),
lines as (
    select sum(gross_amount - discount_amount) as line_total from {{ ref('int_order_lines') }}
)
select *
from orders, lines
where abs(orders.net_total - (lines.line_total + orders.shipping_total)) > 0.01
