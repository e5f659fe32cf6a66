{#- Public entry point:

      dbt run-operation ade_discover [--args '{top_n: 10}']      (or adegen.ade_discover)

    Graph only: reads `graph`, runs no query, so it needs no warehouse connection.
    Logs the human summary (one log line each) and then emits exactly one payload:
      <<ADEGEN:RESULT:v1>>{envelope json}<</ADEGEN:RESULT:v1>>
    Arguments (all optional; `python -m adegen.discover` passes them through --args):
      top_n          number of ranked candidates (default 10)
      catalog        list of pattern dicts (default: the generated ade_pattern_catalog())
      target_facts   real target facts {profile, target, type, path, database, schema, project_dir}
                     (default: from `target`)
      hide_packages  package names not to report (e.g. adegen when it was injected)
      summary        false to skip the human summary -#}
{% macro ade_discover(top_n=10, catalog=none, target_facts=none, hide_packages=none, summary=true) %}
  {%- if not execute -%}{{ return(none) }}{%- endif -%}
  {%- set payload = adegen.ade_collect_discovery(
      top_n=top_n, catalog=catalog, target_facts=target_facts, hide_packages=hide_packages) -%}
  {%- if summary -%}
    {%- for line in adegen.ade_discovery_summary(payload) -%}
      {%- do log(line, info=true) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- do adegen.ade_emit('ade_discover', payload) -%}
{% endmacro %}
