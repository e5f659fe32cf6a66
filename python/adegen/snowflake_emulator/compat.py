"""fakesnow compat macros (shared/docs/fakesnow.md, "Fixes" 1) and installing them into a project copy.

The overrides only act when `DBT_FAKESNOW=1` is set (run_dbt sets it); otherwise they fall through
to dbt-snowflake's own macros, so the real Snowflake path is unchanged. They must live in the
**root** project's macro path (a package would need `dispatch:` config to take precedence).
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

COMPAT_FILE_NAME = "fakesnow_compat.sql"

COMPAT_MACROS_SQL = r"""{# adegen: fakesnow compat macros; inert unless DBT_FAKESNOW=1 (see shared/docs/fakesnow.md) #}

{# fakesnow rejects fully-qualified TEMPORARY tables/views; use transient/plain ones instead #}
{% macro snowflake__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if temporary and language == 'sql' and env_var('DBT_FAKESNOW', '') -%}
    {{ snowflake__create_table_transient_sql(relation, compiled_code) }}
  {%- else -%}
    {{ dbt.snowflake__create_table_as(temporary, relation, compiled_code, language) }}
  {%- endif -%}
{%- endmacro %}

{% macro snowflake__create_view_as_with_temp_flag(relation, sql, is_temporary=False) -%}
  {{ dbt.snowflake__create_view_as_with_temp_flag(relation, sql, is_temporary and not env_var('DBT_FAKESNOW', '')) }}
{%- endmacro %}

{# fakesnow's MERGE rewrite needs `values (DBT_INTERNAL_SOURCE.col, ...)` instead of bare column names #}
{% macro _fakesnow_qualify_merge_values(dml, cols) -%}
  {%- if not env_var('DBT_FAKESNOW', '') -%}{{ return(dml) }}{%- endif -%}
  {%- set csv = cols | join(', ') -%}
  {%- set qualified = [] -%}
  {%- for c in cols %}{% do qualified.append('DBT_INTERNAL_SOURCE.' ~ c) %}{% endfor -%}
  {{ return(modules.re.sub('values\\s*\\(\\s*' ~ modules.re.escape(csv) ~ '\\s*\\)', 'values (' ~ (qualified | join(', ')) ~ ')', dml)) }}
{%- endmacro %}

{% macro snowflake__get_merge_sql(target, source_sql, unique_key, dest_columns, incremental_predicates) -%}
  {%- set dml = dbt.snowflake__get_merge_sql(target, source_sql, unique_key, dest_columns, incremental_predicates) -%}
  {%- set cols = [] -%}
  {%- for c in dest_columns %}{% do cols.append(adapter.quote(c.name)) %}{% endfor -%}
  {{ return(_fakesnow_qualify_merge_values(dml, cols)) }}
{%- endmacro %}

{% macro snowflake__snapshot_merge_sql(target, source, insert_cols) -%}
  {{ return(_fakesnow_qualify_merge_values(dbt.snowflake__snapshot_merge_sql(target, source, insert_cols), insert_cols)) }}
{%- endmacro %}

{# MERGE becomes several statements incl. CREATE TEMPORARY TABLE, which DuckDB refuses inside dbt's
   begin/commit; run DML in autocommit against fakesnow #}
{% macro snowflake_dml_explicit_transaction(dml) %}
  {%- if env_var('DBT_FAKESNOW', '') -%}
    {% do return(dml) %}
  {%- else -%}
    {% do return(dbt.snowflake_dml_explicit_transaction(dml)) %}
  {%- endif -%}
{% endmacro %}

{# no QUERY_TAG session parameter and no GRANT in fakesnow #}
{% macro set_query_tag() -%}
  {%- if env_var('DBT_FAKESNOW', '') -%}{{ return(none) }}{%- endif -%}
  {{ return(dbt.set_query_tag()) }}
{%- endmacro %}
{% macro unset_query_tag(original_query_tag) -%}
  {%- if env_var('DBT_FAKESNOW', '') -%}{{ return(none) }}{%- endif -%}
  {{ return(dbt.unset_query_tag(original_query_tag)) }}
{%- endmacro %}
{% macro apply_grants(relation, grant_config, should_revoke=True) -%}
  {%- if env_var('DBT_FAKESNOW', '') -%}{{ return('') }}{%- endif -%}
  {{ return(dbt.apply_grants(relation, grant_config, should_revoke)) }}
{%- endmacro %}
"""

_MACRO_DEF = re.compile(r"{%-?\s*macro\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(")
COMPAT_MACRO_NAMES = tuple(_MACRO_DEF.findall(COMPAT_MACROS_SQL))


def _macro_paths(project_dir: Path) -> list[str]:
    try:
        cfg = yaml.safe_load((project_dir / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        cfg = {}
    paths = cfg.get("macro-paths") or ["macros"]
    return [str(p) for p in paths] if isinstance(paths, list) else ["macros"]


def conflicting_macros(project_dir: str | Path) -> list[str]:
    """Compat macro names the project already defines itself (installing would be a duplicate)."""
    project_dir = Path(project_dir)
    found: set[str] = set()
    for mp in _macro_paths(project_dir):
        for sql in sorted((project_dir / mp).rglob("*.sql")):
            if sql.name == COMPAT_FILE_NAME:
                continue
            try:
                found.update(_MACRO_DEF.findall(sql.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
    return sorted(found & set(COMPAT_MACRO_NAMES))


def install_compat_macros(project_dir: str | Path) -> Path | None:
    """Write `fakesnow_compat.sql` into the first macro path of a (scratch) project copy.

    Returns the file written, or None when the project already defines one of the macros (it then
    controls that behaviour itself; install nothing rather than create a duplicate-macro error)."""
    project_dir = Path(project_dir)
    if conflicting_macros(project_dir):
        return None
    target = project_dir / _macro_paths(project_dir)[0] / COMPAT_FILE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(COMPAT_MACROS_SQL, encoding="utf-8")
    return target
