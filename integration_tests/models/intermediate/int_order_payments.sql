{%- set methods = var('payment_methods') -%}

with payments as (

    select * from {{ ref('stg_payments') }}

)

select
    order_id,
    {% for method in methods %}
    sum(case when payment_method = '{{ method }}' and payment_status = 'success' then amount_cents else 0 end)
        as {{ method }}_cents,
    {% endfor %}
    sum(
        case
            when payment_method not in ({% for method in methods %}'{{ method }}'{% if not loop.last %}, {% endif %}{% endfor %})
                and payment_status = 'success'
                then amount_cents
            else 0
        end
    ) as other_method_cents,
    sum(case when payment_status = 'success' then amount_cents else 0 end) as paid_cents,
    sum(case when payment_status = 'refunded' then amount_cents else 0 end) as refunded_cents,
    count(case when payment_status = 'failed' then payment_id end) as failed_attempts,
    count(*) as payment_events,
    min(case when payment_status = 'success' then created_at end) as first_paid_at,
    max(case when payment_status = 'refunded' then created_at end) as last_refunded_at
from payments
group by order_id
