{#- Private helpers of the assertion renderers (macros/assertions/). -#}

{#- A name substituted into a rendered test sits inside SQL and Jinja string literals, so it may
    not carry quotes, backslashes, Jinja delimiters, template markers or line breaks. -#}
{% macro _ade_assert_name(value, what) -%}
    {%- if value is not string or value | trim == '' -%}
        {{ exceptions.raise_compiler_error("adegen assertion: " ~ what ~ " must be a non-empty string, got " ~ (value | string)) }}
    {%- endif -%}
    {%- if modules.re.search("['\"\\\\{}%#<>\r\n]", value) -%}
        {{ exceptions.raise_compiler_error("adegen assertion: " ~ what ~ " contains a character that cannot be quoted: " ~ value) }}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{% macro _ade_assert_name_list(values, what) -%}
    {%- if values is string or values is mapping or values is not iterable or values | length == 0 -%}
        {{ exceptions.raise_compiler_error("adegen assertion: " ~ what ~ " must be a non-empty list, got " ~ (values | string)) }}
    {%- endif -%}
    {%- for v in values -%}
        {%- do _ade_assert_name(v, what ~ "[" ~ loop.index0 ~ "]") -%}
    {%- endfor -%}
    {{ return(values | list) }}
{%- endmacro %}
