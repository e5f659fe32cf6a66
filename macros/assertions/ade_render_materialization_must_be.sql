{#- materialization_must_be - args: {model, expected (table/view/incremental/ephemeral/...)}.
    Deviation from the spec text: the failure message. The spec writes
    `select '<model> is materialized as ' ~ actual ~ ', expected <expected>' as error_message`
    outside any Jinja expression, so `~ actual ~` reaches the database as SQL and the test ERRORs
    instead of failing. Here `actual` is interpolated inside the SQL string with {{ actual }}. -#}
{% macro ade_render_materialization_must_be(model, expected, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set project_name = _ade_assert_name(project_name, 'project_name') -%}
    {%- set expected = _ade_assert_name(expected, 'expected') -%}
    {%- set tpl -%}{% raw %}-- depends_on: {{ ref('<model>') }}
{% set node = graph.nodes.get("model.<project_name>.<model>") %}
{% set actual = node.config.materialized if node else 'unknown' %}
{% if actual != '<expected>' %}
    select '<model> is materialized as {{ actual }}, expected <expected>' as error_message
{% else %}
    select 'ok' as error_message where false
{% endif %}
{% endraw %}{%- endset -%}
    {{ return(tpl | replace('<project_name>', project_name) | replace('<model>', model) | replace('<expected>', expected)) }}
{%- endmacro %}
