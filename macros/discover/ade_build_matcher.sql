{#- Everything needed to match token sequences fast, built once per run (pure).

    Every feature needle and every applicable pattern needle (' tok tok ') goes into ONE regex
    `(?=( needle1 | needle2 ...))`, longest first, so one findall per model finds them all; a
    needle that is a prefix of a found one (' count ( ' in ' count ( distinct ') is present too
    (`implied`). A pattern applies on this adapter when its db_types is 'all' (or contains it) or
    contains the adapter type.

    Returns {hit_re (compiled), implied: {needle: [needles]}, feature_of: {needle: [feature ids]},
    feature_ids (table order), regex_features: [{id, needles, regex}], patterns: [{id, index, needles (set), requires}],
    by_needle: {needle: [pattern index]}, always: [index of patterns without needles]}. -#}
{% macro ade_build_matcher(catalog, adapter_type, lx) %}
  {%- set re = modules.re -%}
  {%- set patterns = [] -%}
  {%- set by_needle = {} -%}
  {%- set always = [] -%}
  {%- set all_needles = set([]) -%}
  {%- set feature_of = {} -%}
  {%- for f in lx.features -%}
    {%- do all_needles.update(f.needles) -%}
    {%- for n in f.needles -%}
      {%- if n not in feature_of -%}{%- do feature_of.update({n: []}) -%}{%- endif -%}
      {%- do feature_of[n].append(f.id) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for p in catalog -%}
    {%- set db_types = p.get('db_types', 'all') -%}
    {%- set db_types = ([db_types] if db_types is string else db_types)|map('lower')|list -%}
    {%- if 'all' in db_types or adapter_type|lower in db_types -%}
      {%- set needles = set([]) -%}
      {%- for seq in p.get('applies_when') or [] -%}
        {%- do needles.add(' ' ~ ([seq] if seq is string else seq)|join(' ')|lower ~ ' ') -%}
      {%- endfor -%}
      {%- set index = patterns|length -%}
      {%- do patterns.append({'id': p['id'], 'index': index, 'needles': needles,
                              'requires': p.get('requires') or {}}) -%}
      {%- do all_needles.update(needles) -%}
      {%- if not needles -%}{%- do always.append(index) -%}{%- endif -%}
      {%- for n in needles -%}
        {%- if n not in by_needle -%}{%- do by_needle.update({n: []}) -%}{%- endif -%}
        {%- do by_needle[n].append(index) -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set keyed = [] -%}
  {%- for n in all_needles -%}{%- do keyed.append({'n': n, 'k': '%06d|%s'|format(999999 - n|length, n)}) -%}{%- endfor -%}
  {%- set ordered = keyed|sort(attribute='k')|map(attribute='n')|list -%}
  {%- set implied = {} -%}
  {%- for n in ordered -%}
    {%- do implied.update({n: []}) -%}
    {%- for m in ordered if n.startswith(m) -%}{%- do implied[n].append(m) -%}{%- endfor -%}
  {%- endfor -%}
  {%- set escaped = [] -%}
  {%- for n in ordered -%}{%- do escaped.append(re.escape(n)) -%}{%- endfor -%}
  {%- set hit_re = re.compile('(?=(' ~ (escaped|join('|') if escaped else '(?!)') ~ '))') -%}
  {{- return({
      'hit_re': hit_re, 'implied': implied, 'feature_of': feature_of,
      'feature_ids': lx.features|map(attribute='id')|list,
      'regex_features': lx.features|selectattr('regex')|list,
      'patterns': patterns, 'by_needle': by_needle, 'always': always,
  }) -}}
{% endmacro %}
