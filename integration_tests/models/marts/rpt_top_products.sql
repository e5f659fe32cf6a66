{{ config(materialized='view') }}

-- the three best-selling products of each category, for the merchandising dashboard
select
    category,
    category_revenue_rank,
    product_id,
    product_name,
    units_sold,
    revenue,
    gross_margin_pct
from {{ ref('dim_products') }}
where category_revenue_rank <= 3
    and revenue_cents > 0
    and (is_active or units_sold >= 10)
