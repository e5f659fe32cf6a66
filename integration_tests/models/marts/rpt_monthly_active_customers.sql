with activity as (

    select * from {{ ref('int_customer_activity_months') }}

),

customers as (

    select customer_id, region, customer_segment from {{ ref('dim_customers') }}

)

select
    activity.activity_month,
    customers.region,
    count(distinct activity.customer_id) as active_customers,
    count(distinct case when customers.customer_segment = 'consumer' then activity.customer_id end)
        as active_consumers,
    count(distinct case when customers.customer_segment <> 'consumer' then activity.customer_id end)
        as active_business_customers
from activity
inner join customers
    on activity.customer_id = customers.customer_id
where activity.activity_month >= cast('{{ var("reporting_start_date") }}' as date)
group by activity.activity_month, customers.region
