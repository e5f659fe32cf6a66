{#- model_must_exist - args: {model}. The spec template verbatim; no depends_on line, since the
    model may legitimately be missing (that is what the test detects). -#}
{% macro ade_render_model_must_exist(model, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set project_name = _ade_assert_name(project_name, 'project_name') -%}
    {%- set tpl -%}{% raw %}{% if "model.<project_name>.<model>" not in graph.nodes %}
    select '<model> does not exist in the graph' as error_message
{% else %}
    select 'ok' as error_message where false
{% endif %}
{% endraw %}{%- endset -%}
    {{ return(tpl | replace('<project_name>', project_name) | replace('<model>', model)) }}
{%- endmacro %}
