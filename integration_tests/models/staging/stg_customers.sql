-- depends_on: {{ ref('raw_customers') }}
with source as (

    select * from {{ source('shop', 'customers') }}

),

renamed as (

    select
        customer_id,
        trim(first_name) as first_name,
        trim(last_name) as last_name,
        lower(trim(email)) as email,
        upper(country_code) as country_code,
        case
            when lower(customer_segment) = 'enterprise' then 'enterprise'
            when lower(customer_segment) in ('smb', 'small business') then 'smb'
            when lower(customer_segment) = 'consumer' then 'consumer'
            else 'unknown'
        end as customer_segment,
        coalesce(lower(referral_source), 'unknown') as referral_source,
        cast(signup_at as timestamp) as signup_at,
        signup_at::date as signup_date,
        cast(updated_at as timestamp) as updated_at,
        lower(email) like '%@acme-test.com' as is_test_account
    from source

)

select * from renamed
