-- one row per customer tag; customers without tags have no rows
select
    c.customer_id,
    t.index as tag_position,
    lower(t.value::varchar) as tag
from {{ ref('stg_customers') }} as c,
    lateral flatten(input => c.tags) as t
