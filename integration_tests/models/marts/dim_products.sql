with products as (

    select * from {{ ref('stg_products') }}

),

sales as (

    select
        product_id,
        sum(units_sold) as units_sold,
        sum(order_count) as order_lines,
        sum(revenue_cents) as revenue_cents,
        sum(gross_margin_cents) as gross_margin_cents,
        count(distinct order_month) as selling_months,
        min(order_month) as first_sold_month,
        max(order_month) as last_sold_month
    from {{ ref('int_product_monthly_sales') }}
    group by product_id

)

select
    products.product_id,
    products.sku,
    products.product_name,
    products.category,
    products.unit_price,
    products.unit_cost,
    products.is_active,
    products.launched_on,
    coalesce(sales.units_sold, 0) as units_sold,
    coalesce(sales.order_lines, 0) as order_lines,
    coalesce(sales.revenue_cents, 0) as revenue_cents,
    {{ cents_to_dollars('coalesce(sales.revenue_cents, 0)') }} as revenue,
    coalesce(sales.gross_margin_cents, 0) as gross_margin_cents,
    round(100.0 * sales.gross_margin_cents / nullif(sales.revenue_cents, 0), 2) as gross_margin_pct,
    coalesce(sales.selling_months, 0) as selling_months,
    sales.first_sold_month,
    sales.last_sold_month,
    rank() over (
        partition by products.category
        order by coalesce(sales.revenue_cents, 0) desc
    ) as category_revenue_rank,
    dense_rank() over (
        order by coalesce(sales.units_sold, 0) desc
    ) as units_sold_rank
from products
left join sales
    on products.product_id = sales.product_id
