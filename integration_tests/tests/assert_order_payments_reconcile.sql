-- Captured payments never exceed the order total, and refunds never exceed what was paid.
select
    order_id,
    order_total_cents,
    paid_cents,
    refunded_cents
from {{ ref('fct_orders') }}
where paid_cents > order_total_cents
    or refunded_cents > paid_cents
