"""Where dbt builds each model: the one lookup from a model's name to its relation.

A model is not always `main.<name>`. dbt's `generate_schema_name` puts a model with a custom schema
(`+schema: analytics`, `config(schema=...)`) in `<target schema>_analytics` (main_analytics on a
DuckDB profile with `schema: main`), `generate_alias_name` names its relation after `alias` when
one is set, and a project may override either macro. The manifest holds the outcome of both
(`database`, `schema`, `alias` of every node), so the relations are read from it and from nowhere
else: screening, the proofs, the solution seed export and the checks of the tests adegen writes all
ask this lookup.

ade-bench grades a solution seed's `table_name` with `ref('<table_name>')` (its AUTO tests and its
equality macro), so a task names a model by its *name*; the relation behind it is whatever that ref
resolves to, which is what this lookup says.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from adegen.sql.quote import ident

DEFAULT_SCHEMA = "main"  # where DuckDB resolves an unqualified name (ade-bench's `--seed` COPY reads there)


@dataclass(frozen=True)
class Relation:
    """One relation of the warehouse: `database` (the DuckDB catalog; None when unknown), `schema`,
    `identifier` (the alias, or the model name when there is none)."""

    database: str | None
    schema: str
    identifier: str

    @property
    def key(self) -> tuple[str, str]:
        """(schema, identifier) lower-cased: how DuckDB matches names within one database file."""
        return self.schema.lower(), self.identifier.lower()

    def sql(self, catalog: str | None = None) -> str:
        """The quoted name, `"schema"."identifier"` (with `catalog`: `"catalog"."schema"."identifier"`)."""
        rel = f"{ident(self.schema)}.{ident(self.identifier)}"
        return f"{ident(catalog)}.{rel}" if catalog else rel

    def __str__(self) -> str:
        return f"{self.schema}.{self.identifier}"

    def unqualified(self, name: str) -> bool:
        """Does the bare `name` read this relation? (`main.<name>`: what ade-bench's `--seed` export
        reads; a model in a custom schema or under an alias is not there.)"""
        return self.key == (DEFAULT_SCHEMA, str(name).lower())


def node_relation(node: Mapping) -> Relation:
    """The relation of one manifest node (model, seed, snapshot): its schema and alias after
    `generate_schema_name` / `generate_alias_name`, as the manifest records them."""
    return Relation(node.get("database") or None, str(node.get("schema") or DEFAULT_SCHEMA),
                    str(node.get("alias") or node["name"]))


def is_current(node: Mapping) -> bool:
    """Does `ref('<name>')` resolve to this node: an unversioned model, or a versioned model's latest
    version (its other versions share the name)."""
    version = node.get("version")
    return version is None or str(version) == str(node.get("latest_version", version))


@dataclass(frozen=True)
class ModelRelations:
    """model name -> where dbt builds it (ephemeral models have no relation and are left out)."""

    by_name: Mapping[str, Relation] = field(default_factory=dict)

    @classmethod
    def from_manifest(cls, manifest: Mapping) -> "ModelRelations":
        nodes = (manifest.get("nodes") or {}).values()
        return cls.from_rows(
            (n["name"], node_relation(n), (n.get("config") or {}).get("materialized"))
            for n in nodes if n.get("resource_type") == "model" and is_current(n))

    @classmethod
    def from_models(cls, models: Mapping[str, Mapping]) -> "ModelRelations":
        """From the validators' model facts ({uid: {name, database, schema, alias, materialized,
        current}}, themselves read from the manifest by `node_relation` and `is_current`)."""
        return cls.from_rows((m["name"], Relation(m.get("database") or None, m["schema"], m["alias"]),
                              m.get("materialized")) for m in models.values() if m.get("current", True))

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[str, Relation, str | None]]) -> "ModelRelations":
        return cls({name: rel for name, rel, materialized in rows if materialized != "ephemeral"})

    def of(self, name: str) -> Relation | None:
        """Where the model `name` is built (None: no such model, or an ephemeral one); the name's
        case as written, else any case (DuckDB and ref() of a lower-cased name agree)."""
        name = str(name)
        rel = self.by_name.get(name)
        if rel is None:
            rel = next((r for n, r in self.by_name.items() if n.lower() == name.lower()), None)
        return rel

    def graded(self, name: str) -> Relation:
        """The relation a task's `table_name` is graded and exported from: the model's, else (a name
        no model has, e.g. an alternate answer key) the unqualified name as ade-bench reads it."""
        return self.of(name) or Relation(None, DEFAULT_SCHEMA, str(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.of(name) is not None
