with orders as (

    select * from {{ ref('int_order_financials') }}

),

sequenced as (

    select * from {{ ref('int_customer_orders_sequenced') }}

)

select
    orders.marketing_channel,
    orders.order_month,
    count(*) as order_count,
    count(distinct orders.customer_id) as customer_count,
    sum(case when sequenced.is_first_order then 1 else 0 end) as first_order_count,
    sum(orders.net_revenue_cents) as net_revenue_cents
from orders
inner join sequenced
    on orders.order_id = sequenced.order_id
    and orders.customer_id = sequenced.customer_id
where orders.is_revenue_order = true
group by orders.marketing_channel, orders.order_month
