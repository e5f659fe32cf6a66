{#- One assertion_tests entry -> the text of a singular dbt test (a string).
    type: a type of the registry python/adegen/tasks/assertion_types.py, rendered by the macro
          `ade_render_<type>` of this folder, called with the entry's args by name plus project_name
    args: the entry's args with placeholders already resolved (see adegen.tasks.assertions).
    A new type needs no change here: its renderer macro is found by name. -#}
{% macro ade_render_assertion(type, args, project_name) -%}
    {%- if args is not mapping -%}
        {{ exceptions.raise_compiler_error("adegen assertion " ~ type ~ ": args must be a mapping, got " ~ (args | string)) }}
    {%- endif -%}
    {%- set renderer = adegen.get('ade_render_' ~ type) if type is string and type != 'assertion' and type != 'assertions' else none -%}
    {%- if renderer is none -%}
        {{ exceptions.raise_compiler_error("adegen assertion: unknown type " ~ (type | string)) }}
    {%- endif -%}
    {{ return(renderer(project_name=project_name, **args)) }}
{%- endmacro %}
