-- depends_on: {{ ref('raw_orders') }}
with source as (

    select * from {{ source('shop', 'orders') }}

),

cleaned as (

    select
        order_id,
        customer_id,
        cast(ordered_at as timestamp) as ordered_at,
        ordered_at::date as order_date,
        lower(trim(status)) as source_status,
        coalesce(lower(marketing_channel), 'direct') as marketing_channel,
        lower(sales_platform) as sales_platform,
        upper(discount_code) as discount_code,
        coalesce(shipping_cents, 0) as shipping_cents
    from source

)

select
    order_id,
    customer_id,
    ordered_at,
    order_date,
    case
        when source_status in ('completed', 'delivered') then 'completed'
        when source_status = 'shipped' then 'shipped'
        when source_status like 'cancel%' then 'cancelled'
        when source_status = 'returned' then 'returned'
        else 'pending'
    end as status,
    source_status,
    marketing_channel,
    sales_platform,
    discount_code,
    discount_code is not null as has_discount_code,
    shipping_cents
from cleaned
