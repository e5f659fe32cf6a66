-- Vendored from dbt-labs/ade-bench @ d739fc3 (the revision adegen targets; its tasks carry this
-- text as tasks/*/macros/ade_bench_equality_test.sql): ade_bench/utils/test_generator.py,
-- _EQUALITY_MACRO_CONTENT (Apache-2.0, see NOTICE.txt). It compares the columns as they are typed:
-- DuckDB's EXCEPT brings each pair to a common type, so 0 and 0.0 are equal. Another revision
-- casts every column to varchar first (0 <> 0.0 there); adegen grades with this one, under which a
-- type-only change passes, so a task it proves fails its broken state under both (issue 30).
-- adegen strips these header lines (everything above the ADEGEN-BODY marker) and writes the body
-- byte for byte as macros/ade_bench_equality_test.sql.
-- ADEGEN-BODY
{% macro ade_bench_equality_test(table_name, answer_keys, cols_to_exclude=[]) %}
    {% if not execute %}
        select 1 where 1=0
    {% else %}
        {% set ns = namespace(matched=false) %}
        {% set actual_rel = load_relation(ref(table_name)) %}

        {% if actual_rel is not none %}
            {% set actual_columns = adapter.get_columns_in_relation(actual_rel) %}
            {% set exclude_lower = cols_to_exclude | map('lower') | list %}

            {%- set actual_col_names = [] -%}
            {%- for col in actual_columns -%}
                {%- if col.name | lower not in exclude_lower -%}
                    {%- do actual_col_names.append(col.name | lower) -%}
                {%- endif -%}
            {%- endfor -%}
            {% set actual_set = actual_col_names | sort %}

            {% for answer_key in answer_keys %}
                {% if not ns.matched %}
                    {% set seed_rel = load_relation(ref(answer_key)) %}
                    {% if seed_rel is not none %}
                        {% set seed_columns = adapter.get_columns_in_relation(seed_rel) %}

                        {%- set seed_col_names = [] -%}
                        {%- for col in seed_columns -%}
                            {%- if col.name | lower not in exclude_lower -%}
                                {%- do seed_col_names.append(col.name | lower) -%}
                            {%- endif -%}
                        {%- endfor -%}
                        {% set seed_set = seed_col_names | sort %}

                        {% if actual_set == seed_set %}
                            {%- set compare_cols = [] -%}
                            {%- for col in actual_columns -%}
                                {%- if col.name | lower not in exclude_lower -%}
                                    {%- do compare_cols.append(col.quoted) -%}
                                {%- endif -%}
                            {%- endfor -%}
                            {% set compare_cols_csv = compare_cols | join(', ') %}

                            {% set query %}
                                with a_minus_b as (
                                    select {{ compare_cols_csv }} from {{ ref(answer_key) }}
                                    except
                                    select {{ compare_cols_csv }} from {{ ref(table_name) }}
                                ),
                                b_minus_a as (
                                    select {{ compare_cols_csv }} from {{ ref(table_name) }}
                                    except
                                    select {{ compare_cols_csv }} from {{ ref(answer_key) }}
                                ),
                                unioned as (
                                    select * from a_minus_b
                                    union all
                                    select * from b_minus_a
                                )
                                select count(*) as diff_count from unioned
                            {% endset %}

                            {% set result = run_query(query) %}
                            {% if result.rows[0][0] == 0 %}
                                {% set ns.matched = true %}
                            {% endif %}
                        {% endif %}
                    {% endif %}
                {% endif %}
            {% endfor %}
        {% endif %}

        {% if ns.matched %}
            select 1 where 1=0
        {% else %}
            select 1
        {% endif %}
    {% endif %}
{% endmacro %}
