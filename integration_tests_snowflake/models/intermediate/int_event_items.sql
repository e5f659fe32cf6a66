-- one row per product mentioned in an event payload
select
    e.event_id,
    e.customer_id,
    e.event_type,
    e.event_date,
    i.index as item_position,
    i.value:product_id::number as product_id,
    nvl(i.value:qty::number, 1) as quantity
from {{ ref('stg_events') }} as e,
    lateral flatten(input => e.payload:items, outer => true) as i
