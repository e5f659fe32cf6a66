{#- sources_must_include - args: {model, expected (list of [source, table] pairs)}.
    The spec template with the loop unrolled into one elif per pair, plus the same `else` branch
    as refs_must_include (without it the passing path renders only `union all select ...`). -#}
{% macro ade_render_sources_must_include(model, expected, project_name) -%}
    {%- set model = _ade_assert_name(model, 'model') -%}
    {%- set project_name = _ade_assert_name(project_name, 'project_name') -%}
    {%- if expected is string or expected is mapping or expected is not iterable or expected | length == 0 -%}
        {{ exceptions.raise_compiler_error("adegen assertion: expected must be a non-empty list of [source, table] pairs, got " ~ (expected | string)) }}
    {%- endif -%}
    {%- set head -%}{% raw %}-- depends_on: {{ ref('<model>') }}
{% set node = graph.nodes.get("model.<project_name>.<model>") %}
{% set actual = node.sources if node else [] %}
{% if node is none %}
    select '<model> not found in graph' as error_message{% endraw %}{%- endset -%}
    {%- set item -%}{% raw %}
{% elif ['<src>', '<tbl>'] not in actual %}
    select '<model> does not source <src>.<tbl>' as error_message{% endraw %}{%- endset -%}
    {%- set tail -%}{% raw %}
{% else %}
    select 'ok' as error_message where false
{% endif %}
union all select 'ok' as error_message where false
{% endraw %}{%- endset -%}
    {%- set parts = [head] -%}
    {%- for pair in expected -%}
        {%- if pair is string or pair is mapping or pair is not iterable or pair | length != 2 -%}
            {{ exceptions.raise_compiler_error("adegen assertion: expected[" ~ loop.index0 ~ "] must be a [source, table] pair, got " ~ (pair | string)) }}
        {%- endif -%}
        {%- set src = _ade_assert_name(pair[0], 'expected[' ~ loop.index0 ~ '][0]') -%}
        {%- set tbl = _ade_assert_name(pair[1], 'expected[' ~ loop.index0 ~ '][1]') -%}
        {%- do parts.append(item.replace('<src>', src).replace('<tbl>', tbl)) -%}
    {%- endfor -%}
    {%- do parts.append(tail) -%}
    {{ return(parts | join('') | replace('<project_name>', project_name) | replace('<model>', model)) }}
{%- endmacro %}
