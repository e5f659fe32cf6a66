{#- dbt run-operation adegen.ade_render_assertions --args '{entries: [{type, args, project_name}, ...]}'
    Renders every entry and logs exactly one result line through adegen.ade_emit (macros/emit/):
    <<ADEGEN:RESULT:v1>>{schema_version, package, ..., operation, payload}<</ADEGEN:RESULT:v1>>
    where payload is a list, in entry order, of {type, model, sql}. Returns the same list. -#}
{% macro ade_render_assertions(entries) -%}
    {%- if entries is string or entries is mapping or entries is not iterable -%}
        {{ exceptions.raise_compiler_error("adegen ade_render_assertions: entries must be a list") }}
    {%- endif -%}
    {%- set payload = [] -%}
    {%- for e in entries -%}
        {%- if e is not mapping -%}
            {{ exceptions.raise_compiler_error("adegen ade_render_assertions: entries[" ~ loop.index0 ~ "] must be a mapping") }}
        {%- endif -%}
        {%- set args = e.get('args') or {} -%}
        {%- set sql = ade_render_assertion(e.get('type'), args, e.get('project_name')) -%}
        {%- do payload.append({'type': e.get('type'), 'model': args.get('model') if args is mapping else none, 'sql': sql}) -%}
    {%- endfor -%}
    {%- do adegen.ade_emit('ade_render_assertions', payload) -%}
    {{ return(payload) }}
{%- endmacro %}
