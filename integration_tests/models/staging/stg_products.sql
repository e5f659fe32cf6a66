-- depends_on: {{ ref('raw_products') }}
with source as (

    select * from {{ source('shop', 'products') }}

)

select
    product_id,
    upper(sku) as sku,
    trim(product_name) as product_name,
    lower(trim(category)) as category,
    unit_price_cents,
    unit_cost_cents,
    {{ cents_to_dollars('unit_price_cents') }} as unit_price,
    {{ cents_to_dollars('unit_cost_cents') }} as unit_cost,
    unit_price_cents - unit_cost_cents as unit_margin_cents,
    is_active,
    cast(launched_on as date) as launched_on
from source
