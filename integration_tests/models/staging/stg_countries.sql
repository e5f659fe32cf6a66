select
    upper(country_code) as country_code,
    country_name,
    region
from {{ ref('ref_countries') }}
