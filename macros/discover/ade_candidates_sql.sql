{#- The ranked candidates as SQL text (for analyses/ade_candidates.sql, so `dbt compile` shows
    them): the summary as comments, then one row per candidate in a `select ... union all`. -#}
{% macro ade_candidates_sql(top_n=10) %}
  {%- if not execute -%}{{ return('select 1 as adegen_not_executed') }}{%- endif -%}
  {%- set payload = adegen.ade_collect_discovery(top_n=top_n) -%}
  {%- set out = [] -%}
  {%- for line in adegen.ade_discovery_summary(payload) -%}{%- do out.append('-- ' ~ line) -%}{%- endfor -%}
  {%- if not payload.candidates -%}
    {%- do out.append("select cast(null as varchar) as model_name, 0 as rank, 0 as score, 0 as matched_pattern_count, cast(null as varchar) as matched_patterns where 1 = 0") -%}
  {%- endif -%}
  {%- for c in payload.candidates -%}
    {%- do out.append(("union all " if not loop.first else "") ~ "select '" ~ c.name ~ "' as model_name, "
        ~ loop.index ~ " as rank, " ~ c.score ~ " as score, " ~ c.matched_patterns|length
        ~ " as matched_pattern_count, '"
        ~ c.matched_patterns|join(',') ~ "' as matched_patterns") -%}
  {%- endfor -%}
  {{- return(out|join('\n')) -}}
{% endmacro %}
