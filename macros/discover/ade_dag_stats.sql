{#- DAG statistics (pure). `parents`: {unique_id: [parent unique_ids]} over every model, seed,
    snapshot and source (all packages); parents outside the map are ignored.
    Returns {unique_id: {up_direct, up_transitive, down_direct, down_transitive, depth, children}}:
      up/down direct      distinct parents / children in the map
      up/down transitive  all ancestors / descendants
      depth               edges on the longest path from a root (a node without parents) to it
      children            direct children, sorted
    Kahn's topological order, then ancestor/descendant sets merged along it (one set update per
    edge; no per-node graph walks); memory is bounded by the sets of the current frontier. -#}
{% macro ade_dag_stats(parents) %}
  {%- set clean = {} -%}
  {%- set children = {} -%}
  {%- set indeg = {} -%}
  {%- for uid in parents -%}{%- do children.update({uid: []}) -%}{%- endfor -%}
  {%- for uid, ps in parents.items() -%}
    {%- set ps2 = ps|select('in', parents)|unique|list -%}
    {%- do clean.update({uid: ps2}) -%}
    {%- do indeg.update({uid: ps2|length}) -%}
    {%- for p in ps2 -%}{%- do children[p].append(uid) -%}{%- endfor -%}
  {%- endfor -%}
  {%- set order = [] -%}
  {%- for uid in parents if indeg[uid] == 0 -%}{%- do order.append(uid) -%}{%- endfor -%}
  {#- `order` grows while it is iterated: Kahn's queue. -#}
  {%- for uid in order -%}
    {%- for c in children[uid] -%}
      {%- do indeg.update({c: indeg[c] - 1}) -%}
      {%- if indeg[c] == 0 -%}{%- do order.append(c) -%}{%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {#- anc[uid] / desc[uid] include uid itself (so one update per edge); counts subtract it.
      A set is dropped once its last child (parent) has merged it, so only the frontier is kept. -#}
  {%- set anc = {} -%}
  {%- set depth = {} -%}
  {%- set up_t = {} -%}
  {%- set waiting = {} -%}
  {%- for uid in order -%}{%- do waiting.update({uid: children[uid]|length}) -%}{%- endfor -%}
  {%- for uid in order -%}
    {%- set a = set([uid]) -%}
    {%- set ns = namespace(d=0) -%}
    {%- for p in clean[uid] -%}
      {%- do a.update(anc[p]) -%}
      {%- if depth[p] >= ns.d -%}{%- set ns.d = depth[p] + 1 -%}{%- endif -%}
      {%- do waiting.update({p: waiting[p] - 1}) -%}
      {%- if waiting[p] == 0 -%}{%- do anc.pop(p) -%}{%- endif -%}
    {%- endfor -%}
    {%- do up_t.update({uid: a|length - 1}) -%}
    {%- if waiting[uid] -%}{%- do anc.update({uid: a}) -%}{%- endif -%}
    {%- do depth.update({uid: ns.d}) -%}
  {%- endfor -%}
  {%- set desc = {} -%}
  {%- set down_t = {} -%}
  {%- for uid in order -%}{%- do waiting.update({uid: clean[uid]|length}) -%}{%- endfor -%}
  {%- for uid in order|reverse -%}
    {%- set d = set([uid]) -%}
    {%- for c in children[uid] -%}
      {%- do d.update(desc[c]) -%}
      {%- do waiting.update({c: waiting[c] - 1}) -%}
      {%- if waiting[c] == 0 -%}{%- do desc.pop(c) -%}{%- endif -%}
    {%- endfor -%}
    {%- do down_t.update({uid: d|length - 1}) -%}
    {%- if waiting[uid] -%}{%- do desc.update({uid: d}) -%}{%- endif -%}
  {%- endfor -%}
  {%- set out = {} -%}
  {%- for uid in order -%}
    {%- do out.update({uid: {
        'up_direct': clean[uid]|length, 'up_transitive': up_t[uid],
        'down_direct': children[uid]|length, 'down_transitive': down_t[uid],
        'depth': depth[uid], 'children': children[uid]|sort,
    }}) -%}
  {%- endfor -%}
  {{- return(out) -}}
{% endmacro %}
