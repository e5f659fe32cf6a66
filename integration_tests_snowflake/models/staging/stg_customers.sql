with source as (

    select * from {{ ref('raw_customers') }}

)

select
    customer_id,
    initcap(first_name) as first_name,
    initcap(last_name) as last_name,
    nvl(lower(trim(email)), 'unknown') as email,
    iff(email is null, false, true) as has_email,
    to_date(signup_date, 'DD/MM/YYYY') as signup_date,
    try_to_date(birth_date) as birth_date,
    upper(country_code) as country_code,
    parse_json(nvl(tags, '[]')) as tags,
    referred_by_customer_id,
    nvl2(referred_by_customer_id, 'referral', 'organic') as acquisition_channel
from source
