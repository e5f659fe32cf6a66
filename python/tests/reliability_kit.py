"""Shared helpers of the reliability suite (`test_reliability_*.py`): tiny dbt projects built in
tmp_path, a clean environment for `python -m adegen.build`, tree hashes and output checks.

Kept out of conftest.py on purpose (conftest holds only the session fixtures every file shares);
test modules import what they need: `from reliability_kit import ...`."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TASK_FILES = ("task.yaml", "setup.sh", "solution.sh", "setup/changes.patch", "solutions/changes.patch")

DBT_PROJECT = """name: {name}
version: "1.0.0"
config-version: 2
profile: {profile}
model-paths: ["models"]
seed-paths: ["seeds"]
models:
  {name}:
    +materialized: table
"""

PROFILES = """{profile}:
  target: dev
  outputs:
    dev:
      type: {adapter}
      path: ./{db}.duckdb
      schema: main
      threads: 1
"""

SNOWFLAKE_PROFILES = """{profile}:
  target: dev
  outputs:
    dev:
      type: snowflake
      account: acct
      user: u
      password: p
      database: {db}
      warehouse: wh
      schema: public
      threads: 1
"""

RAW_ORDERS = """order_id,customer_id,amount,status
1,1,10.5,complete
2,1,20.0,complete
3,2,5.25,cancelled
4,3,7.0,complete
5,3,,returned
"""

RAW_CUSTOMERS = """id,name,region
1,Ada,north
2,Bob,
3,Cy,south
"""

# Models with sites for several catalog families (aggregates, joins, filters, coalesce, columns).
MODELS = {
    "models/staging/stg_orders.sql": (
        "select\n    order_id,\n    customer_id,\n    coalesce(amount, 0) as amount,\n    status\n"
        "from {{ ref('raw_orders') }}\n"),
    "models/staging/stg_customers.sql": (
        "select\n    id as customer_id,\n    name,\n    coalesce(region, 'unknown') as region\n"
        "from {{ ref('raw_customers') }}\n"),
    "models/marts/fct_customers.sql": (
        "select\n    c.customer_id,\n    c.region,\n    sum(o.amount) as total_amount,\n"
        "    count(*) as order_count\n"
        "from {{ ref('stg_customers') }} as c\n"
        "left join {{ ref('stg_orders') }} as o\n    on c.customer_id = o.customer_id\n"
        "where o.status != 'cancelled'\n"
        "group by c.customer_id, c.region\n"),
}


def make_project(root: Path, *, name: str = "tiny", dirname: str | None = None, profile: str | None = None,
                 adapter: str = "duckdb", models: dict[str, str | bytes] | None = None,
                 extra: dict[str, str | bytes | None] | None = None, profiles: str | None = None,
                 seeds: bool = True) -> Path:
    """A small seed-based DuckDB project at root/<dirname or name>. `models` replaces the default
    models; `extra` adds or (value None) removes files; `profiles` replaces profiles.yml text."""
    profile = profile or name
    p = root / (dirname or name)
    p.mkdir(parents=True)
    files: dict[str, str | bytes | None] = {
        "dbt_project.yml": DBT_PROJECT.format(name=name, profile=profile),
        "profiles.yml": profiles if profiles is not None else (
            SNOWFLAKE_PROFILES.format(profile=profile, db=name) if adapter == "snowflake"
            else PROFILES.format(profile=profile, adapter=adapter, db=name)),
    }
    if seeds:
        files["seeds/raw_orders.csv"] = RAW_ORDERS
        files["seeds/raw_customers.csv"] = RAW_CUSTOMERS
    files.update(MODELS if models is None else models)
    files.update(extra or {})
    for rel, content in files.items():
        f = p / rel
        if content is None:
            if f.exists():
                f.unlink()
            continue
        f.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            f.write_bytes(content)
        else:
            f.write_text(content, encoding="utf-8")
    return p


def process_alive(pid: int) -> bool:
    """Process `pid` exists and is not a zombie (a dead child nobody has reaped yet is not alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return not Path("/proc").is_dir()  # no procfs: os.kill said it exists


def tree_state(root: Path) -> dict[str, str]:
    """rel path -> content hash (files), link target (symlinks) or 'dir': byte-identity of a tree."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def build_env(home: Path) -> dict:
    """No ade-bench (private HOME; PATH = a private bin dir with only python and dbt, then the
    system dirs: pyenv shims would bring `ade` back), no DBT_PROFILES_DIR, unbuffered output."""
    home.mkdir(parents=True, exist_ok=True)
    bindir = home / "bin"
    bindir.mkdir(exist_ok=True)
    pybin = Path(sys.executable).resolve().parent
    for tool in ("dbt", "python", "python3"):
        src = pybin / tool
        if src.exists() and not (bindir / tool).exists():
            (bindir / tool).symlink_to(src)
    if not (bindir / "python").exists():
        (bindir / "python").symlink_to(Path(sys.executable).resolve())
    system = [d for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
              if Path(d).is_dir() and not (Path(d) / "ade").exists()]
    env = dict(os.environ, HOME=str(home), PATH=os.pathsep.join([str(bindir), *system]),
               PYTHONPATH=str(REPO / "python"), PYTHONUNBUFFERED="1", DBT_SEND_ANONYMOUS_USAGE_STATS="false",
               DO_NOT_TRACK="1")
    for k in ("DBT_PROFILES_DIR", "ADE_DATABASES_DIR", "ADEGEN_DEBUG"):
        env.pop(k, None)
    return env


@pytest.fixture(scope="session")
def rel_env(tmp_path_factory, adegen_cache) -> dict:
    return build_env(tmp_path_factory.mktemp("home"))


def build_cmd(args) -> list[str]:
    return [sys.executable, "-m", "adegen.build", *map(str, args)]


def run_build(args, env: dict, *, timeout: int = 600, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """One build in a subprocess; every task it writes passes `task_shapes.check_written`."""
    from task_shapes import check_written

    r = subprocess.run(build_cmd(args), env=env, cwd=cwd or REPO, capture_output=True, text=True,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    check_written(r)
    return r


def task_dirs(out: Path) -> list[Path]:
    tasks = out / "tasks"
    return sorted(d for d in tasks.iterdir() if not d.name.startswith(".")) if tasks.is_dir() else []


def temp_leftovers(out: Path) -> list[Path]:
    found = []
    for sub in ("tasks", "projects", "databases", ".adegen/runs"):
        d = out / sub
        if d.is_dir():
            found += [x for x in d.iterdir() if x.name.startswith(".adegen-tmp-")]
    return found


def assert_complete_tasks(out: Path, project_name: str) -> list[str]:
    """Every visible task dir is complete; ids are <name>001.. without gaps or duplicates."""
    ids = [d.name for d in task_dirs(out)]
    assert ids == [f"{project_name}{n:03d}" for n in range(1, len(ids) + 1)], ids
    for tid in ids:
        d = out / "tasks" / tid
        # a data change (tag data-change) breaks the data through setup.sh, not the code: no setup patch
        data_change = "- data-change\n" in (d / "task.yaml").read_text()
        for f in TASK_FILES:
            if data_change and f == "setup/changes.patch":
                assert not (d / f).exists(), f"{tid}/{f}"
                continue
            assert (d / f).is_file() and (d / f).stat().st_size > 0, f"{tid}/{f}"
    return ids


def roundtrip(project_copy: Path, task_dir: Path, work: Path) -> None:
    """GNU patch -p1: setup changes the copy, solution restores it byte for byte."""
    shutil.copytree(project_copy, work, symlinks=True)
    before = tree_state(work)
    for patch, changed in ((task_dir / "setup" / "changes.patch", True),
                           (task_dir / "solutions" / "changes.patch", False)):
        with patch.open("rb") as fh:
            r = subprocess.run(["patch", "-p1", "--batch", "--no-backup-if-mismatch", "-F0"], stdin=fh, cwd=work,
                               capture_output=True, text=True)
        assert r.returncode == 0, f"{patch}: {r.stdout}{r.stderr}"
        assert (tree_state(work) != before) == changed, patch
