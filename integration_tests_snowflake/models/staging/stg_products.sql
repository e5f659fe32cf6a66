select
    product_id,
    product_name,
    split_part(category_path, ' > ', 1) as category,
    split_part(category_path, ' > ', 2) as subcategory,
    try_to_number(list_price, 10, 2) as list_price,
    iff(is_active = 'Y', true, false) as is_active
from {{ ref('raw_products') }}
