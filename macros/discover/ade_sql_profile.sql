{#- Tokens, SQL features and complexity of one model's raw SQL (pure).

    tokens = re.findall(TOKEN_RE, re.sub(MASK_RE, MASK_REPL, raw_code)) lower-cased (Jinja,
    comments and string literals masked; regexes from adegen/sql/lexer.py via ade_lexer()).
    text   = ' ' ~ tokens|join(' ') ~ ' ' : token-sequence containment is a substring search,
    done for all needles at once by the matcher's regex (ade_build_matcher).

    Complexity score (adegen/sql/features.py is the reference):
      complexity = line_count // 10 + 2*joins + 2*ctes + 3*windows + cases + aggregates + refs
    joins: ' join ' occurrences; ctes: `with|, <name> as (`; windows: ' over ('; cases: ' case ';
    aggregates: sum/count/avg/min/max calls; refs: number of ref() calls.
    Returns {present (set of needles found), features, line_count, join_count, complexity}. -#}
{% macro ade_sql_profile(raw_code, n_refs, lx, matcher) %}
  {%- set re = modules.re -%}
  {%- set text = ' ' ~ re.findall(lx.token_re, re.sub(lx.mask_re, lx.mask_repl, raw_code))|join(' ')|lower ~ ' ' -%}
  {%- set present = set([]) -%}
  {%- for hit in set(matcher.hit_re.findall(text)) -%}{%- do present.update(matcher.implied[hit]) -%}{%- endfor -%}
  {%- set found = set([]) -%}
  {%- for n in present if n in matcher.feature_of -%}{%- do found.update(matcher.feature_of[n]) -%}{%- endfor -%}
  {%- for f in matcher.regex_features if f.id not in found and re.search(f.regex, text) -%}
    {%- do found.add(f.id) -%}
  {%- endfor -%}
  {%- set line_count = raw_code.splitlines()|length -%}
  {%- set joins = text.count(' join ') -%}
  {%- set complexity = line_count // 10 + 2 * joins + 2 * (re.findall(lx.cte_re, text)|length)
      + 3 * text.count(' over (') + text.count(' case ') + (re.findall(lx.aggregate_re, text)|length) + n_refs -%}
  {{- return({'present': present, 'features': matcher.feature_ids|select('in', found)|list,
              'line_count': line_count, 'join_count': joins, 'complexity': complexity}) -}}
{% endmacro %}
