{#- One assertion_tests entry -> the text of a singular dbt test (a string).
    type: refs_must_include | refs_must_match_exactly | refs_must_not_include |
          sources_must_include | materialization_must_be | column_must_exist | model_must_exist
    args: the entry's args with placeholders already resolved (see adegen.assertions). -#}
{% macro ade_render_assertion(type, args, project_name) -%}
    {%- if args is not mapping -%}
        {{ exceptions.raise_compiler_error("adegen assertion " ~ type ~ ": args must be a mapping, got " ~ (args | string)) }}
    {%- endif -%}
    {%- if type == 'refs_must_include' -%}
        {{ return(ade_render_refs_must_include(args.get('model'), args.get('expected'), project_name)) }}
    {%- elif type == 'refs_must_match_exactly' -%}
        {{ return(ade_render_refs_must_match_exactly(args.get('model'), args.get('expected'), project_name)) }}
    {%- elif type == 'refs_must_not_include' -%}
        {{ return(ade_render_refs_must_not_include(args.get('model'), args.get('forbidden'), project_name)) }}
    {%- elif type == 'sources_must_include' -%}
        {{ return(ade_render_sources_must_include(args.get('model'), args.get('expected'), project_name)) }}
    {%- elif type == 'materialization_must_be' -%}
        {{ return(ade_render_materialization_must_be(args.get('model'), args.get('expected'), project_name)) }}
    {%- elif type == 'column_must_exist' -%}
        {{ return(ade_render_column_must_exist(args.get('model'), args.get('column'), project_name)) }}
    {%- elif type == 'model_must_exist' -%}
        {{ return(ade_render_model_must_exist(args.get('model'), project_name)) }}
    {%- else -%}
        {{ exceptions.raise_compiler_error("adegen assertion: unknown type " ~ (type | string)) }}
    {%- endif -%}
{%- endmacro %}
