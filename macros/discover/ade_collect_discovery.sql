{#- The discovery payload (pure: walks `graph`, runs no query, logs nothing). See ade_discover
    for the arguments and docs/architecture.md ("Discovery payload") for the fields:
      {project, database, models, package_models, sources, packages, macros, candidates}
    Models are the root project's models (sorted by unique_id); package_models the layers of
    the other packages' models. DAG statistics count models, seeds, snapshots and sources of
    every package (ade_dag_stats); layers look at every package's models (ade_model_layers). -#}
{% macro ade_collect_discovery(top_n=10, catalog=none, target_facts=none, hide_packages=none) %}
  {%- set facts = target_facts or {} -%}
  {%- set hide = hide_packages or [] -%}
  {%- set lx = adegen.ade_lexer() -%}
  {%- set db = adegen.ade_database_facts(facts) -%}
  {%- set adapter_type = db.type|lower -%}
  {%- set matcher = adegen.ade_build_matcher(adegen.ade_pattern_catalog() if catalog is none else catalog,
                                             adapter_type, lx) -%}
  {%- set root = project_name -%}

  {#- the DAG: models, seeds, snapshots (graph.nodes) and sources -#}
  {%- set parents = {} -%}
  {%- set tests_by_node = {} -%}
  {%- set accepted_by_node = {} -%}
  {%- set layer_facts = {} -%}
  {%- for uid, n in graph.nodes.items() -%}
    {%- if n.resource_type in ('model', 'seed', 'snapshot') -%}
      {%- do parents.update({uid: (n.depends_on or {}).get('nodes') or []}) -%}
      {%- if n.resource_type == 'model' -%}
        {%- do layer_facts.update({uid: {'name': n.name, 'package_name': n.package_name, 'path': n.path,
                                         'parents': parents[uid]}}) -%}
      {%- endif -%}
    {%- elif n.resource_type == 'test' -%}
      {%- set attached = n.get('attached_node') -%}
      {%- for target_uid in ([attached] if attached else (n.depends_on or {}).get('nodes') or []) -%}
        {%- if target_uid not in tests_by_node -%}{%- do tests_by_node.update({target_uid: []}) -%}{%- endif -%}
        {%- do tests_by_node[target_uid].append(n.name) -%}
      {%- endfor -%}
      {#- the codes an accepted_values test lists: what a column's values mean (a status that
          can be 'returned') -#}
      {%- set meta = n.get('test_metadata') or {} -%}
      {%- set kw = meta.get('kwargs') or {} -%}
      {%- if meta.get('name') == 'accepted_values' and attached and n.get('column_name')
            and kw.get('values') is iterable and kw.get('values') is not string -%}
        {%- if attached not in accepted_by_node -%}{%- do accepted_by_node.update({attached: {}}) -%}{%- endif -%}
        {%- set vals = [] -%}
        {%- for v in kw.get('values') if v is string -%}{%- do vals.append(v) -%}{%- endfor -%}
        {%- do accepted_by_node[attached].update({n.column_name: vals}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for uid in graph.sources -%}{%- do parents.update({uid: []}) -%}{%- endfor -%}
  {%- set dag = adegen.ade_dag_stats(parents) -%}
  {%- set layers = adegen.ade_model_layers(layer_facts, dag) -%}

  {#- models of the root project -#}
  {%- set models = [] -%}
  {%- for uid in graph.nodes|sort -%}
    {%- set n = graph.nodes[uid] -%}
    {%- if n.resource_type == 'model' and n.package_name == root -%}
      {%- set refs = [] -%}
      {%- for r in n.refs or [] -%}
        {%- do refs.append(r.name if r is mapping else r[-1]) -%}
      {%- endfor -%}
      {%- set sources = [] -%}
      {%- for s in n.sources or [] -%}{%- do sources.append([s[0], s[1]]) -%}{%- endfor -%}
      {%- set raw = n.raw_code or '' -%}
      {%- if (n.language or 'sql') == 'sql' -%}
        {%- set prof = adegen.ade_sql_profile(raw, refs|length, lx, matcher) -%}
      {%- else -%}
        {%- set prof = {'present': none, 'features': [], 'line_count': raw.splitlines()|length,
                        'join_count': 0, 'complexity': 0} -%}
      {%- endif -%}
      {%- set st = dag[uid] -%}
      {%- set child_models = [] -%}
      {%- for c in st.children if graph.nodes.get(c, {}).get('resource_type') == 'model' -%}
        {%- do child_models.append(c) -%}
      {%- endfor -%}
      {%- set model = {
          'unique_id': uid,
          'name': n.name,
          'package_name': n.package_name,
          'path': n.original_file_path.replace('\\', '/'),
          'layer': layers[uid].layer,
          'layer_rule': layers[uid].rule,
          'materialized': n.config.materialized,
          'enabled': n.config.enabled,
          'version': n.version,
          'language': n.language or 'sql',
          'refs': refs,
          'sources': sources,
          'depends_on': (n.depends_on or {}).get('nodes') or [],
          'upstream': {'direct': st.up_direct, 'transitive': st.up_transitive},
          'downstream': {'direct': st.down_direct, 'transitive': st.down_transitive},
          'downstream_models': child_models,
          'depth': st.depth,
          'columns': n.columns.keys()|list,
          'tests': (tests_by_node.get(uid) or [])|unique|sort,
          'accepted_values': accepted_by_node.get(uid) or {},
          'features': prof.features,
          'complexity': prof.complexity,
          'line_count': prof.line_count,
          'join_count': prof.join_count,
      } -%}
      {%- do model.update({'matched_patterns': adegen.ade_match_patterns(model, prof.present, matcher)
                            if prof.present is not none else []}) -%}
      {%- do models.append(model) -%}
    {%- endif -%}
  {%- endfor -%}

  {#- the layers of the other packages' models -#}
  {%- set package_models = [] -%}
  {%- for uid in layer_facts|sort -%}
    {%- set n = graph.nodes[uid] -%}
    {%- if n.package_name != root and n.package_name not in hide -%}
      {%- do package_models.append({'unique_id': uid, 'name': n.name, 'package_name': n.package_name,
                                    'path': n.original_file_path.replace('\\', '/'),
                                    'layer': layers[uid].layer, 'layer_rule': layers[uid].rule}) -%}
    {%- endif -%}
  {%- endfor -%}

  {#- sources of the root project -#}
  {%- set sources = [] -%}
  {%- for uid in graph.sources|sort -%}
    {%- set s = graph.sources[uid] -%}
    {%- if s.package_name == root -%}
      {%- do sources.append({'unique_id': uid, 'source': s.source_name, 'table': s.name,
                             'identifier': s.identifier or s.name}) -%}
    {%- endif -%}
  {%- endfor -%}

  {#- installed packages and project macros. `graph` has no macros, so they come from the macro
      namespaces in `context`: one mapping per non-internal package (dbt's and the adapter's
      own macros are under 'dbt'), whose values are macros carrying `macro.package_name`. -#}
  {%- set pkgs = {} -%}
  {%- set macros = [] -%}
  {%- for key in context -%}
    {%- set ns_ = context[key] -%}
    {#- a plain dict (relations such as `this` are Mappings that refuse iteration) -#}
    {%- if ns_ is mapping and ns_.fromkeys is defined and key not in ('graph', 'modules', 'builtins', 'context') -%}
      {%- set members = ns_.values()|list -%}
      {%- if members and members[0].macro is defined and members[0].macro.package_name == key -%}
        {%- if key == root -%}
          {%- do macros.extend(ns_.keys()) -%}
        {%- elif key != 'dbt' and key not in hide -%}
          {%- do pkgs.update({key: 1}) -%}
        {%- endif -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for n in graph.nodes.values() -%}
    {%- if n.package_name != root and n.package_name not in hide -%}
      {%- do pkgs.update({n.package_name: 1}) -%}
    {%- endif -%}
  {%- endfor -%}

  {%- set project = {
      'name': root,
      'profile': facts.get('profile') or target.profile_name,
      'target': facts.get('target') or target.name,
      'dbt_version': dbt_version,
      'adapter_type': adapter_type,
      'project_dir': facts.get('project_dir'),
  } -%}
  {{- return({
      'project': project,
      'database': db,
      'models': models,
      'package_models': package_models,
      'sources': sources,
      'packages': pkgs.keys()|sort,
      'macros': macros|unique|sort,
      'candidates': adegen.ade_rank_candidates(models, top_n),
  }) -}}
{% endmacro %}
