{#- The top `top_n` task candidates (pure): models with at least one matched pattern, ranked by
    the one ranking of adegen (python/adegen/propose/ranking.py is the definition, this macro its twin;
    the constants come from the generated ade_lexer().ranking):
      score = join * has_join + downstream * min(downstream.transitive, downstream_cap)
            + layer * layer_weight[layer] + min(complexity, complexity_cap)
            + inputs * min(refs + sources, inputs_cap)
    higher score first, then name, then unique_id. Returns [{unique_id, name, score, matched_patterns}]. -#}
{% macro ade_rank_candidates(models, top_n=10) %}
  {%- set r = adegen.ade_lexer().ranking -%}
  {%- set keyed = [] -%}
  {%- for m in models if m.matched_patterns -%}
    {%- set joins = [] -%}
    {%- for f in m.features if 'join' in f -%}{%- do joins.append(f) -%}{%- endfor -%}
    {%- set weight = r.layer_weight.get(m.layer, r.layer_weight[r.default_layer]) -%}
    {%- set score = (r.join if joins else 0)
        + r.downstream * ([m.downstream.transitive, r.downstream_cap]|min)
        + r.layer * weight
        + ([m.complexity, r.complexity_cap]|min)
        + r.inputs * ([m.refs|length + m.sources|length, r.inputs_cap]|min) -%}
    {%- set key = '%09d|%s|%s'|format(999999999 - score, m.name, m.unique_id) -%}
    {%- do keyed.append({'key': key, 'm': m, 'score': score}) -%}
  {%- endfor -%}
  {%- set out = [] -%}
  {%- for k in (keyed|sort(attribute='key'))[:top_n|int] -%}
    {%- do out.append({'unique_id': k.m.unique_id, 'name': k.m.name,
                       'score': k.score, 'matched_patterns': k.m.matched_patterns}) -%}
  {%- endfor -%}
  {{- return(out) -}}
{% endmacro %}
