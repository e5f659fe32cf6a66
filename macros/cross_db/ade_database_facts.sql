{#- Database facts for the discovery payload: {type, path, database, schema}.

    `target_facts` are the real target's facts passed in by Python through --args (Python runs
    dbt with a scratch profile: DuckDB ':memory:', Snowflake dummy credentials), so they win over
    `target`; run plainly (`dbt run-operation ade_discover`), `target` is the real target.
    Dispatched (dbt-utils style): duckdb has a file path, snowflake a database. -#}
{% macro ade_database_facts(target_facts={}) %}
  {{- return(adapter.dispatch('ade_database_facts', 'adegen')(target_facts or {})) -}}
{% endmacro %}

{% macro default__ade_database_facts(target_facts) %}
  {{- return({
      'type': target_facts.get('type') or target.type,
      'path': target_facts.get('path'),
      'database': target_facts.get('database') or target.database,
      'schema': target_facts.get('schema') or target.schema,
  }) -}}
{% endmacro %}

{% macro duckdb__ade_database_facts(target_facts) %}
  {{- return({
      'type': 'duckdb',
      'path': target_facts.get('path') if 'path' in target_facts else target.path,
      'database': target_facts.get('database') or target.database,
      'schema': target_facts.get('schema') or target.schema,
  }) -}}
{% endmacro %}

{% macro snowflake__ade_database_facts(target_facts) %}
  {{- return({
      'type': 'snowflake',
      'path': none,
      'database': target_facts.get('database') or target.database,
      'schema': target_facts.get('schema') or target.schema,
  }) -}}
{% endmacro %}
