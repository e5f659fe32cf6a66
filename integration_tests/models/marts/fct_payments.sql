{%- set methods = var('payment_methods') -%}

with payments as (

    select * from {{ ref('stg_payments') }}

),

orders as (

    select order_id, customer_id, ordered_at from {{ ref('int_orders_enriched') }}

)

select
    payments.payment_id,
    payments.order_id,
    orders.customer_id,
    payments.payment_method,
    case
        when payments.payment_method in ({% for method in methods %}'{{ method }}'{% if not loop.last %}, {% endif %}{% endfor %})
            then payments.payment_method
        else 'other'
    end as payment_method_group,
    payments.payment_status,
    payments.amount_cents,
    payments.amount,
    case
        when payments.payment_status = 'refunded' then -payments.amount_cents
        else payments.amount_cents
    end as signed_amount_cents,
    payments.created_at,
    payments.created_at::date as payment_date,
    date_diff('minute', orders.ordered_at, payments.created_at) as minutes_after_order
from payments
inner join orders
    on payments.order_id = orders.order_id
where payments.payment_status != 'failed'
