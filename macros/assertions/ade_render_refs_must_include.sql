{#- refs_must_include - args: {model, expected (list of names)}.
    Renders the spec template with the loop unrolled into one elif per expected ref.
    Deviation from the spec text (which errors on the passing path): an `else` branch selecting
    no rows, because an if-chain that renders nothing leaves `union all select ...` as the whole
    query, a syntax error. The spec's trailing `union all` line is kept (harmless). -#}
{% macro ade_render_refs_must_include(model, expected, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set project_name = _ade_assert_name(project_name, 'project_name') -%}
    {%- set expected = _ade_assert_name_list(expected, 'expected') -%}
    {%- set head -%}{% raw %}-- depends_on: {{ ref('<model>') }}
{% set node = graph.nodes.get("model.<project_name>.<model>") %}
{% set actual = node.refs | map(attribute='name') | list if node else [] %}
{% if node is none %}
    select '<model> not found in graph' as error_message{% endraw %}{%- endset -%}
    {%- set item -%}{% raw %}
{% elif '<r>' not in actual %}
    select '<model> does not ref <r>' as error_message{% endraw %}{%- endset -%}
    {%- set tail -%}{% raw %}
{% else %}
    select 'ok' as error_message where false
{% endif %}
union all select 'ok' as error_message where false
{% endraw %}{%- endset -%}
    {%- set parts = [head] -%}
    {%- for r in expected -%}
        {%- do parts.append(item.replace('<r>', r)) -%}
    {%- endfor -%}
    {%- do parts.append(tail) -%}
    {{ return(parts | join('') | replace('<project_name>', project_name) | replace('<model>', model)) }}
{%- endmacro %}
