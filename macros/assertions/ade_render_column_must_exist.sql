{#- column_must_exist - args: {model, column}. The spec template verbatim: information_schema.columns,
    lower-cased on both sides for DuckDB/Snowflake portability. -#}
{% macro ade_render_column_must_exist(model, column, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set column = _ade_assert_name(column, 'column') -%}
    {%- set tpl -%}{% raw %}-- depends_on: {{ ref('<model>') }}
select 'column <column> missing from <model>' as error_message
where not exists (
    select 1
    from information_schema.columns
    where lower(table_name) = lower('<model>')
      and lower(column_name) = lower('<column>')
)
{% endraw %}{%- endset -%}
    {{ return(tpl | replace('<column>', column) | replace('<model>', model)) }}
{%- endmacro %}
