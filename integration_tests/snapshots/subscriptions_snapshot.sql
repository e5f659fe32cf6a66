{% snapshot subscriptions_snapshot %}

{{
    config(
        unique_key='subscription_id',
        strategy='timestamp',
        updated_at='updated_at'
    )
}}

-- history of membership plan and status changes (type-2 slowly changing dimension)
select * from {{ ref('raw_subscriptions') }}

{% endsnapshot %}
