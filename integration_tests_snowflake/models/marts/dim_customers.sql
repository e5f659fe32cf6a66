with customers as (

    select * from {{ ref('stg_customers') }}

),

orders as (

    select * from {{ ref('fct_orders') }}
    where status not in ('cancelled', 'pending')

),

order_summary as (

    select
        customer_id,
        count(*) as order_count,
        sum(net_amount) as lifetime_value,
        min(order_date) as first_order_date,
        max(order_date) as last_order_date,
        array_agg(order_id) within group (order by order_date, order_id) as order_ids
    from orders
    group by customer_id

),

tags as (

    select
        customer_id,
        listagg(tag, '|') within group (order by tag) as tag_list
    from {{ ref('int_customer_tags') }}
    group by customer_id

)

select
    customers.customer_id,
    customers.first_name,
    customers.last_name,
    customers.email,
    customers.country_code,
    customers.signup_date,
    customers.acquisition_channel,
    zeroifnull(order_summary.order_count)::number(38, 0) as order_count,
    zeroifnull(order_summary.lifetime_value)::number(12, 2) as lifetime_value,
    order_summary.first_order_date,
    order_summary.last_order_date,
    datediff(day, customers.signup_date, order_summary.first_order_date) as days_to_first_order,
    order_summary.order_ids[0]::number as first_order_id,
    array_size(order_summary.order_ids)::number(38, 0) as order_id_count,
    tags.tag_list,
    iff(zeroifnull(order_summary.lifetime_value) >= 1000, 'high',
        iff(zeroifnull(order_summary.lifetime_value) > 0, 'medium', 'none')) as value_tier
from customers
left join order_summary
    on customers.customer_id = order_summary.customer_id
left join tags
    on customers.customer_id = tags.customer_id
