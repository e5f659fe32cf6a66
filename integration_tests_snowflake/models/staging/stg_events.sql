with parsed as (

    select
        event_id,
        customer_id,
        lower(event_type) as event_type,
        occurred_at_utc,
        parse_json(payload) as payload
    from {{ ref('raw_events') }}

)

select
    event_id,
    customer_id,
    event_type,
    occurred_at_utc,
    occurred_at_utc::date as event_date,
    payload:device::varchar as device,
    nvl(payload:utm.source::varchar, 'unattributed') as utm_source,
    payload
from parsed
