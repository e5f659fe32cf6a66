{#- The one emitter: wraps a collector's payload in the versioned envelope and logs it exactly
    once, on one line, between the markers <<ADEGEN:RESULT:v1>> and <</ADEGEN:RESULT:v1>>, via
    log(..., info=true) (a JinjaLogInfo event; `print` is not used because --no-print drops it).

    Envelope: {schema_version, package, package_version, dbt_version, adapter, operation, payload}.
    The payload must be JSON-serialisable (collectors return plain dicts/lists/strings/numbers).
    Keys are sorted so the output is deterministic. -#}
{% macro ade_emit(operation, payload) %}
  {%- set envelope = {
      'schema_version': 1,
      'package': 'adegen',
      'package_version': adegen.ade_lexer().package_version,
      'dbt_version': dbt_version,
      'adapter': target.type,
      'operation': operation,
      'payload': payload,
  } -%}
  {%- set body = tojson(envelope, sort_keys=true) -%}
  {%- if body is none -%}
    {{ exceptions.raise_compiler_error("adegen: the " ~ operation ~ " payload is not JSON-serialisable") }}
  {%- endif -%}
  {%- do log('<<ADEGEN:RESULT:v1>>' ~ body ~ '<</ADEGEN:RESULT:v1>>', info=true) -%}
{% endmacro %}
