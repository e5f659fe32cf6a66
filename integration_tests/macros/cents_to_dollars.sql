{#- Convert an integer amount in cents to a dollar amount with a fixed scale. -#}
{% macro cents_to_dollars(column_name, scale=2) -%}
    cast(({{ column_name }}) / 100.0 as decimal(18, {{ scale }}))
{%- endmacro %}
