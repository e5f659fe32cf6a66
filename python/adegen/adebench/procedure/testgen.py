"""AUTO test generation exactly as ade-bench main does it.

Port of dbt-labs/ade-bench (main) `ade_bench/utils/test_generator.py` (Apache-2.0, see
resources/NOTICE.txt): the generated file texts are byte-identical to upstream's. adegen adds one
rule of its own: every test name (file stem) must be at most `MAX_TEST_NAME` characters, because
ade-bench's console parser stops seeing long names (harness notes, section 8).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from adegen.adebench.limits import MAX_TEST_NAME
from adegen.core.errors import InputError

EQUALITY_MACRO_FILENAME = "ade_bench_equality_test.sql"
_BODY_MARKER = "-- ADEGEN-BODY\n"


class TestNameTooLong(InputError):
    """A generated or shipped test name is longer than MAX_TEST_NAME characters."""

    __test__ = False  # not a pytest class


@dataclass
class SolutionSeed:
    """One `solution_seeds` item (ade-bench `SolutionSeedConfig`)."""

    table_name: str
    exclude_columns: list[str] | None = None
    include_columns: list[str] | None = None
    exclude_tests: list[str] | None = None
    alternates: list[str] | None = None

    @classmethod
    def from_item(cls, item: Any) -> "SolutionSeed":
        if isinstance(item, str):
            return cls(table_name=item)
        if not isinstance(item, dict) or not item.get("table_name"):
            raise InputError(f"invalid solution_seeds item: {item!r}", field="solution_seeds")
        return cls(
            table_name=str(item["table_name"]),
            exclude_columns=item.get("exclude_columns"),
            include_columns=item.get("include_columns"),
            exclude_tests=item.get("exclude_tests"),
            alternates=item.get("alternates"),
        )

    def test_names(self) -> list[str]:
        excluded = set(self.exclude_tests or [])
        names = []
        if "equality_test" not in excluded:
            names.append(f"AUTO_{self.table_name}_equality")
        if "existence_test" not in excluded:
            names.append(f"AUTO_{self.table_name}_existence")
        return names


def equality_macro() -> str:
    """The text of `macros/ade_bench_equality_test.sql` (upstream `_EQUALITY_MACRO_CONTENT`)."""
    text = resources.files(__package__).joinpath("resources", EQUALITY_MACRO_FILENAME).read_text()
    return text.split(_BODY_MARKER, 1)[1]


def generate_existence_test(table_name: str) -> str:
    return f"""{{% set table_name = '{table_name}' %}}



-------------------------------------
---- DO NOT EDIT BELOW THIS LINE ----
{{% set answer_key = 'solution__' + table_name %}}

{{% set table_a = load_relation(ref(answer_key)) %}}
{{% set table_b = load_relation(ref(table_name)) %}}

{{% if table_a is none or table_b is none %}}
    select 1
{{% else %}}
    select 1 where false
{{% endif %}}
"""


def generate_equality_test(table_name: str, config: SolutionSeed | None = None) -> str:
    cols_to_include: list[str] = []
    cols_to_exclude: list[str] = []
    alternates: list[str] = []
    if config:
        if config.include_columns:
            cols_to_include = config.include_columns
        if config.exclude_columns:
            cols_to_exclude = config.exclude_columns
        if config.alternates:
            alternates = config.alternates

    answer_keys = [f"solution__{table_name}"]
    for alt in alternates:
        answer_keys.append(f"solution__{alt}")
    answer_keys_jinja = ", ".join(f"'{k}'" for k in answer_keys)
    include_list = ",\n    ".join([f"'{col}'" for col in cols_to_include]) if cols_to_include else ""
    exclude_list = ",\n    ".join([f"'{col}'" for col in cols_to_exclude]) if cols_to_exclude else ""
    depends_on_lines = "\n".join(f"-- depends_on: {{{{ ref('{k}') }}}}" for k in answer_keys)

    return f"""-- Define columns to compare
{{% set table_name = '{table_name}' %}}
{{% set answer_keys = [{answer_keys_jinja}] %}}

{{% set cols_to_include = [
    {include_list}
] %}}

{{% set cols_to_exclude = [
    {exclude_list}
] %}}


-------------------------------------
---- DO NOT EDIT BELOW THIS LINE ----
-- depends_on: {{{{ ref(table_name) }}}}
{depends_on_lines}

{{{{ ade_bench_equality_test(table_name=table_name, answer_keys=answer_keys, cols_to_exclude=cols_to_exclude) }}}}
"""


def check_test_names(names: Iterable[str], *, where: str | None = None) -> None:
    """Raise TestNameTooLong when a test name exceeds MAX_TEST_NAME characters."""
    long = [n for n in names if len(n) > MAX_TEST_NAME]
    if long:
        raise TestNameTooLong(
            "test name(s) longer than %d characters are never counted by ade-bench's parser: %s"
            % (MAX_TEST_NAME, ", ".join(f"{n} ({len(n)})" for n in long)),
            file=where,
        )


def generate_solution_tests(
    seeds: Iterable[SolutionSeed], test_dir: Path, macros_dir: Path | None = None
) -> list[str]:
    """Write AUTO_<t>_equality.sql / AUTO_<t>_existence.sql (and the macro) like upstream.

    Returns the generated test names. Refuses (raises) names longer than MAX_TEST_NAME."""
    seeds = list(seeds)
    names = [n for s in seeds for n in s.test_names()]
    check_test_names(names)
    test_dir.mkdir(parents=True, exist_ok=True)
    for cfg in seeds:
        excluded = set(cfg.exclude_tests or [])
        if "equality_test" not in excluded:
            (test_dir / f"AUTO_{cfg.table_name}_equality.sql").write_text(
                generate_equality_test(cfg.table_name, cfg)
            )
            if macros_dir is not None:
                macros_dir.mkdir(parents=True, exist_ok=True)
                macro_path = macros_dir / EQUALITY_MACRO_FILENAME
                if not macro_path.exists():
                    macro_path.write_text(equality_macro())
        if "existence_test" not in excluded:
            (test_dir / f"AUTO_{cfg.table_name}_existence.sql").write_text(
                generate_existence_test(cfg.table_name)
            )
    return names


@dataclass
class GradingSpec:
    """What the harness reads from task.yaml (the fields that matter for grading)."""

    path: Path
    raw: dict = field(repr=False)
    test_setup: str | None
    solution_seeds: list[SolutionSeed]
    db_name: str
    project_name: str
    max_test_timeout_sec: float | None

    @classmethod
    def load(cls, task_dir: Path, db_type: str = "duckdb", project_type: str = "dbt") -> "GradingSpec":
        import yaml

        path = Path(task_dir) / "task.yaml"
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"cannot read task.yaml: {exc}", file=path) from exc
        variant = None
        for v in raw.get("variants") or []:
            if v.get("db_type") == db_type and v.get("project_type", "dbt") == project_type:
                variant = v
                break
        if variant is None:
            raise InputError(f"no variant with db_type={db_type} project_type={project_type}",
                             file=path, field="variants")
        return cls(
            path=path,
            raw=raw,
            test_setup=raw.get("test_setup"),
            solution_seeds=[SolutionSeed.from_item(i) for i in raw.get("solution_seeds") or []],
            db_name=str(variant.get("db_name")),
            project_name=str(variant.get("project_name")),
            max_test_timeout_sec=raw.get("max_test_timeout_sec"),
        )
