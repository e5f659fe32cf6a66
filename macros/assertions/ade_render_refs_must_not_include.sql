{#- refs_must_not_include - args: {model, forbidden (list of names)}.
    The spec template with the loop unrolled into one elif per forbidden ref, plus the same `else`
    branch as refs_must_include (without it the passing path renders only `union all select ...`). -#}
{% macro ade_render_refs_must_not_include(model, forbidden, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set project_name = _ade_assert_name(project_name, 'project_name') -%}
    {%- set forbidden = _ade_assert_name_list(forbidden, 'forbidden') -%}
    {%- set head -%}{% raw %}-- depends_on: {{ ref('<model>') }}
{% set node = graph.nodes.get("model.<project_name>.<model>") %}
{% set actual = node.refs | map(attribute='name') | list if node else [] %}
{% if node is none %}
    select '<model> not found in graph' as error_message{% endraw %}{%- endset -%}
    {%- set item -%}{% raw %}
{% elif '<f>' in actual %}
    select '<model> must not ref <f>' as error_message{% endraw %}{%- endset -%}
    {%- set tail -%}{% raw %}
{% else %}
    select 'ok' as error_message where false
{% endif %}
union all select 'ok' as error_message where false
{% endraw %}{%- endset -%}
    {%- set parts = [head] -%}
    {%- for f in forbidden -%}
        {%- do parts.append(item.replace('<f>', f)) -%}
    {%- endfor -%}
    {%- do parts.append(tail) -%}
    {{ return(parts | join('') | replace('<project_name>', project_name) | replace('<model>', model)) }}
{%- endmacro %}
