{#- Layer of every model (pure): {unique_id: {layer, rule}}.
      models  {unique_id: {name, package_name, path, parents}} for the models of every package;
              path is relative to the package's model path (dbt's node.path), parents are
              dbt's depends_on.nodes
      dag     ade_dag_stats() over models, seeds, snapshots and sources (children, depth)
    The rule tables come from the generated ade_layer_rules() (adegen/discover/layers.py is the
    single definition and the Python reference); rules are tried in `order`, the first that
    says something wins (docs/architecture.md, "Model layers", gives the reason for each):
      prefix           name starts with a layer prefix              -> its layer
      folder           first folder from the top naming a layer      -> its layer
      package          package named *_source (a source package)     -> staging
      dag_sources      reads only sources/seeds/snapshots            -> staging
      weak_folder      first ambiguous folder (core)                 -> its layer
      root_file        at the top of a package that uses layer folders -> marts
      dag_end          reads models, no model reads it               -> marts
      dag_after_marts  reads a marts model, feeds models             -> marts
      dag_middle       reads models, feeds models                    -> intermediate
      dag_start        reads nothing dbt knows, feeds models         -> staging
      (none)           nothing fits                                  -> other
    `rule` is the rule id, with the prefix/folder/package that matched after a colon.
    Models are labelled by DAG depth, so a model's parents are labelled before it. -#}
{% macro ade_model_layers(models, dag) %}
  {%- set r = adegen.ade_layer_rules() -%}
  {%- set re = modules.re -%}

  {#- the first strong and the first weak layer folder of each model (folder names are shared by
      many models, so each is looked up once), and the packages that use layer folders -#}
  {%- set folder_layer = {} -%}
  {%- set hits = {} -%}
  {%- set layered = {} -%}
  {%- for uid, m in models.items() -%}
    {%- set h = {'strong': none, 'weak': none} -%}
    {%- for part in m.path.replace('\\', '/').split('/')[:-1] -%}
      {%- if part not in folder_layer -%}
        {%- set words = [part|lower] + re.split(r.word_split_re, part|lower) -%}
        {%- set strong = words|select('in', r.folders)|list -%}
        {%- set weak = words|select('in', r.weak_folders)|list -%}
        {%- do folder_layer.update({part: [r.folders[strong[0]] if strong else none,
                                           r.weak_folders[weak[0]] if weak else none]}) -%}
      {%- endif -%}
      {%- if h.strong is none and folder_layer[part][0] -%}{%- do h.update({'strong': [part, folder_layer[part][0]]}) -%}{%- endif -%}
      {%- if h.weak is none and folder_layer[part][1] -%}{%- do h.update({'weak': [part, folder_layer[part][1]]}) -%}{%- endif -%}
    {%- endfor -%}
    {%- do hits.update({uid: h}) -%}
    {%- if h.strong or h.weak -%}{%- do layered.update({m.package_name: true}) -%}{%- endif -%}
  {%- endfor -%}

  {%- set keyed = [] -%}
  {%- for uid in models -%}{%- do keyed.append([dag[uid].depth, uid]) -%}{%- endfor -%}
  {%- set out = {} -%}
  {%- for pair in keyed|sort -%}
    {%- set uid = pair[1] -%}
    {%- set m = models[uid] -%}
    {%- set h = hits[uid] -%}
    {#- ns.dag: the model's DAG facts, computed when the first DAG rule is reached -#}
    {%- set ns = namespace(label=none, dag=none) -%}
    {%- for rule in r.order if ns.label is none -%}
      {%- if rule == 'prefix' -%}
        {%- set hit = re.match(r.prefix_re, m.name|lower) -%}
        {%- if hit -%}{%- set ns.label = {'layer': r.prefixes[hit.group(1)], 'rule': 'prefix:' ~ hit.group(1)} -%}{%- endif -%}
      {%- elif rule == 'folder' -%}
        {%- if h.strong -%}{%- set ns.label = {'layer': h.strong[1], 'rule': 'folder:' ~ h.strong[0]} -%}{%- endif -%}
      {%- elif rule == 'package' -%}
        {%- for sfx in r.source_package_suffixes if ns.label is none and (m.package_name|lower).endswith(sfx) -%}
          {%- set ns.label = {'layer': 'staging', 'rule': 'package:' ~ m.package_name} -%}
        {%- endfor -%}
      {%- elif rule == 'weak_folder' -%}
        {%- if h.weak -%}{%- set ns.label = {'layer': h.weak[1], 'rule': 'weak_folder:' ~ h.weak[0]} -%}{%- endif -%}
      {%- else -%}
        {%- if ns.dag is none -%}
          {%- set model_parents = m.parents|select('in', models)|list -%}
          {%- set after = namespace(marts=false) -%}
          {%- for p in model_parents if out[p].layer == 'marts' -%}{%- set after.marts = true -%}{%- endfor -%}
          {%- set ns.dag = {
              'inputs': (m.parents|select('in', dag)|list|length) > 0,
              'model_parents': model_parents|length > 0,
              'children': (dag[uid].children|select('in', models)|list|length) > 0,
              'after_marts': after.marts,
          } -%}
        {%- endif -%}
        {%- set d = ns.dag -%}
        {%- set holds = {
            'dag_sources': d.inputs and not d.model_parents,
            'root_file': '/' not in m.path.replace('\\', '/') and m.package_name in layered,
            'dag_end': d.model_parents and not d.children,
            'dag_after_marts': d.after_marts,
            'dag_middle': d.model_parents,
            'dag_start': d.children,
        } -%}
        {%- if holds[rule] -%}{%- set ns.label = {'layer': r.dag_rule_layers[rule], 'rule': rule} -%}{%- endif -%}
      {%- endif -%}
    {%- endfor -%}
    {%- do out.update({uid: ns.label or {'layer': 'other', 'rule': 'none'}}) -%}
  {%- endfor -%}
  {{- return(out) -}}
{% endmacro %}
