-- depends_on: {{ ref('raw_web_events') }}
with source as (

    select * from {{ source('web', 'events') }}

),

deduplicated as (

    -- events are delivered at least once: keep the first load of each event_id
    select
        *,
        row_number() over (
            partition by event_id
            order by _loaded_at, session_id
        ) as delivery_number
    from source

)

select
    event_id,
    session_id,
    customer_id,
    lower(event_type) as event_type,
    lower(page_url) as page_url,
    cast(event_at as timestamp) as event_at,
    coalesce(lower(device), 'unknown') as device_type,
    coalesce(utm_source, 'none') as utm_source,
    cast(_loaded_at as timestamp) as loaded_at
from deduplicated
where delivery_number = 1
