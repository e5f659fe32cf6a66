{#- refs_must_match_exactly - args: {model, expected (list of names)}.
    Deviation from the spec text: the mismatch message. The spec writes
    `select '<model> refs mismatch - actual: ' ~ actual ~ ', expected: ' ~ expected as error_message`
    outside any Jinja expression, so `~ actual ~` reaches the database as SQL (`~` is a regex
    operator and `actual` an unknown column): the test ERRORs instead of failing with a message.
    Here the lists are interpolated inside the SQL string with {{ ... | join(', ') }}.
    Second deviation: both lists go through `unique`. dbt keeps one node.refs entry per ref() call,
    so a model that refs the same model twice (self-join, union) would never match a list of
    distinct names; the assertion is about which models are referenced, not how often. -#}
{% macro ade_render_refs_must_match_exactly(model, expected, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set project_name = _ade_assert_name(project_name, 'project_name') -%}
    {%- set expected = _ade_assert_name_list(expected, 'expected') -%}
    {%- set quoted = [] -%}
    {%- for r in expected -%}
        {%- do quoted.append("'" ~ r ~ "'") -%}
    {%- endfor -%}
    {%- set tpl -%}{% raw %}-- depends_on: {{ ref('<model>') }}
{% set node = graph.nodes.get("model.<project_name>.<model>") %}
{% if node is none %}
    select '<model> not found in graph' as error_message
{% else %}
    {% set actual = node.refs | map(attribute='name') | unique | list | sort %}
    {% set expected = [<expected>] | unique | list | sort %}
    {% if actual != expected %}
        select '<model> refs mismatch — actual: [{{ actual | join(', ') }}], expected: [{{ expected | join(', ') }}]' as error_message
    {% else %}
        select 'ok' as error_message where false
    {% endif %}
{% endif %}
{% endraw %}{%- endset -%}
    {{ return(tpl | replace('<project_name>', project_name) | replace('<model>', model) | replace('<expected>', quoted | join(', '))) }}
{%- endmacro %}
