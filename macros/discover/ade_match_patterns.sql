{#- Ids of the matcher's patterns (ade_build_matcher) that match one model, in catalog order
    (pure): every applies_when needle is present in the model's token text and every `requires`
    holds:
      materialized: [..]  the model's materialization is listed
      min_refs: N         at least N ref() calls
      min_sources: N      at least N source() calls
      min_columns: N      at least N documented columns
    An unknown `requires` key is a compiler error (the Python engine must agree exactly). -#}
{% macro ade_match_patterns(model, present, matcher) %}
  {%- set candidates = set(matcher.always) -%}
  {%- for n in present if n in matcher.by_needle -%}{%- do candidates.update(matcher.by_needle[n]) -%}{%- endfor -%}
  {%- set matched = [] -%}
  {%- for index in candidates|sort -%}
    {%- set p = matcher.patterns[index] -%}
    {%- if p.needles.issubset(present) -%}
      {%- set ns = namespace(ok=true) -%}
      {%- for key, value in p.requires.items() -%}
        {%- if key == 'materialized' -%}
          {%- set allowed = [value] if value is string else value -%}
          {%- if model.materialized not in allowed -%}{%- set ns.ok = false -%}{%- endif -%}
        {%- elif key == 'min_refs' -%}
          {%- if model.refs|length < value -%}{%- set ns.ok = false -%}{%- endif -%}
        {%- elif key == 'min_sources' -%}
          {%- if model.sources|length < value -%}{%- set ns.ok = false -%}{%- endif -%}
        {%- elif key == 'min_columns' -%}
          {%- if model.columns|length < value -%}{%- set ns.ok = false -%}{%- endif -%}
        {%- else -%}
          {{ exceptions.raise_compiler_error("adegen: pattern " ~ p.id ~ ": unknown requires key '" ~ key ~ "'") }}
        {%- endif -%}
      {%- endfor -%}
      {%- if ns.ok -%}{%- do matched.append(p.id) -%}{%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(matched) -}}
{% endmacro %}
