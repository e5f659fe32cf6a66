{#- The human summary of a discovery payload, as a list of lines (pure):
      Found dbt project: {project_name}
      Database: {type} at {path_or_connection}
      Models: {count} ({staging} staging, {intermediate} intermediate, {marts} marts, {other} other)
      Sources: {count} source tables
      Packages: {list}
      Top task candidates: {count} models identified
        1. {model} ({n} patterns: {ids})
    `path_or_connection` is the DuckDB file path, or database.schema on Snowflake. -#}
{% macro ade_discovery_summary(payload) %}
  {%- set db = payload.database -%}
  {%- set counts = {'staging': 0, 'intermediate': 0, 'marts': 0, 'other': 0} -%}
  {%- for m in payload.models -%}{%- do counts.update({m.layer: counts[m.layer] + 1}) -%}{%- endfor -%}
  {%- set location = db.path if db.path else (db.database ~ '.' ~ db.schema) -%}
  {%- set lines = [
      'Found dbt project: ' ~ payload.project.name,
      'Database: ' ~ db.type ~ ' at ' ~ location,
      'Models: ' ~ payload.models|length ~ ' (' ~ counts.staging ~ ' staging, ' ~ counts.intermediate
        ~ ' intermediate, ' ~ counts.marts ~ ' marts, ' ~ counts.other ~ ' other)',
      'Sources: ' ~ payload.sources|length ~ ' source tables',
      'Packages: ' ~ (payload.packages|join(', ') if payload.packages else '(none)'),
      'Top task candidates: ' ~ payload.candidates|length ~ ' models identified',
  ] -%}
  {%- for c in payload.candidates -%}
    {%- do lines.append('  ' ~ loop.index ~ '. ' ~ c.name ~ ' (' ~ c.matched_patterns|length ~ ' patterns: '
                        ~ c.matched_patterns|join(', ') ~ ')') -%}
  {%- endfor -%}
  {{- return(lines) -}}
{% endmacro %}
