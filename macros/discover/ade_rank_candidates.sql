{#- The top `top_n` task candidates (pure): models with at least one matched pattern, ranked by
    number of matched patterns, then more transitive downstream dependants, then more direct
    ones, then more joins, then name. Returns [{unique_id, name, score, matched_patterns}]. -#}
{% macro ade_rank_candidates(models, top_n=10) %}
  {%- set keyed = [] -%}
  {%- for m in models if m.matched_patterns -%}
    {%- set key = '%06d|%06d|%06d|%06d|%s|%s'|format(
        999999 - m.matched_patterns|length, 999999 - m.downstream.transitive,
        999999 - m.downstream.direct, 999999 - m.join_count, m.name, m.unique_id) -%}
    {%- do keyed.append({'key': key, 'm': m}) -%}
  {%- endfor -%}
  {%- set out = [] -%}
  {%- for k in (keyed|sort(attribute='key'))[:top_n|int] -%}
    {%- do out.append({'unique_id': k.m.unique_id, 'name': k.m.name,
                       'score': k.m.matched_patterns|length, 'matched_patterns': k.m.matched_patterns}) -%}
  {%- endfor -%}
  {{- return(out) -}}
{% endmacro %}
