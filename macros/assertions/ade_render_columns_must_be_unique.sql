{#- columns_must_be_unique - args: {model, columns}. A grain test (not one of the spec's templates):
    the key values that occur more than once. The screening verdict adds it to a task whose bug shows
    only as duplicate rows, which ade-bench's set-based equality test cannot see; ade-bench's own
    analytics_engineering005 grades a removed dedup with a row-count test the same way. -#}
{% macro ade_render_columns_must_be_unique(model, columns, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set columns = _ade_assert_name_list(columns, 'columns') -%}
    {%- set tpl -%}{% raw %}-- <model> should have one row per <columns>
select <columns>, count(*) as copies
from {{ ref('<model>') }}
group by <columns>
having count(*) > 1
{% endraw %}{%- endset -%}
    {{ return(tpl | replace('<columns>', columns | join(', ')) | replace('<model>', model)) }}
{%- endmacro %}
