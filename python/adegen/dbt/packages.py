"""Packages as the user installed them, never the network: what `dbt deps` would install, offline.

`plan_packages(project_dir)` resolves what a project declares (packages.yml / dependencies.yml):

* `local:` packages, nested ones included: each local package's own packages.yml is followed, and
  every `local:` path is resolved against the ROOT project directory, as dbt deps resolves them
  (dbt-core `LocalPinnedPackage.resolve_path(project)` with the root project). Two different paths
  giving the same package name is dbt's "Found duplicate project" error.
* hub / git / tarball / private packages: dbt deps would download them; offline the stand-in is
  exactly what the user has installed (the project's `packages-install-path`, default
  dbt_packages/), with the versions of its dbt_project.yml files checked against package-lock.yml.

`install(plan, dest)` then does what `dbt deps` does with the result: one symlink per package in
`dest` (the scratch copy's install directory). Scratch copies never run `dbt deps` themselves, so
they work offline whatever the project uses, and the user's dbt_packages/ is only read.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from adegen.core.errors import InputError

PACKAGE_FILES = ("packages.yml", "dependencies.yml")
REMOTE_KEYS = ("package", "git", "tarball", "private")


def _load(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read: {e}", file=path) from None
    except yaml.YAMLError as e:
        raise InputError(f"not valid YAML ({str(e).splitlines()[0]})", file=path, field="packages") from None
    if not isinstance(data, dict):
        raise InputError("must be a YAML mapping", file=path)
    return data


def package_file(project_dir: Path) -> Path | None:
    return next((Path(project_dir) / n for n in PACKAGE_FILES if (Path(project_dir) / n).is_file()), None)


def package_entries(project_dir: Path) -> list:
    """The `packages:` list of the project's packages.yml / dependencies.yml ([] without one)."""
    f = package_file(project_dir)
    if f is None:
        return []
    entries = _load(f).get("packages") or []
    if not isinstance(entries, list):
        raise InputError("must be a list", file=f, field="packages")
    return entries


def _project_field(package_dir: Path, key: str) -> str | None:
    try:
        data = yaml.safe_load((Path(package_dir) / "dbt_project.yml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    value = data.get(key) if isinstance(data, dict) else None
    return str(value) if value not in (None, "") else None


def project_name(package_dir: Path) -> str | None:
    return _project_field(package_dir, "name")


def package_version(package_dir: Path) -> str | None:
    return _project_field(package_dir, "version")


def is_adegen(package_dir: Path) -> bool:
    return project_name(package_dir) == "adegen"


def install_path(project_dir: Path) -> str:
    """The project's `packages-install-path` (default dbt_packages), as written."""
    try:
        cfg = yaml.safe_load((Path(project_dir) / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        cfg = {}
    value = cfg.get("packages-install-path") if isinstance(cfg, dict) else None
    return str(value) if isinstance(value, str) and "{{" not in value else "dbt_packages"


def is_remote(entry) -> bool:
    return isinstance(entry, dict) and any(k in entry for k in REMOTE_KEYS)


def describe(entry) -> str:
    if not isinstance(entry, dict):
        return str(entry)
    for key in ("local", *REMOTE_KEYS):
        if key in entry:
            return f"{key}: {entry[key]}"
    return str(entry)


@dataclass
class ReusedPackage:
    name: str                 # the package's dbt project name (its install directory)
    source: str               # "local: vendor/x", "package: fivetran/intercom_source", ...
    path: Path                # the directory linked into the scratch install directory
    version: str | None = None

    def line(self) -> str:
        return f"{self.name} {self.version or ''} ({self.source})".replace("  ", " ")


@dataclass
class PackagePlan:
    links: dict[str, Path] = field(default_factory=dict)    # install dir name -> directory
    reused: list[ReusedPackage] = field(default_factory=list)
    remote: bool = False                                     # hub/git packages stood in for
    notes: list[str] = field(default_factory=list)

    def summary(self) -> list[str]:
        return [p.line() for p in self.reused]


def _lock_versions(project_dir: Path) -> dict[str, str]:
    """{package or git url: version/revision} from package-lock.yml."""
    lock = Path(project_dir) / "package-lock.yml"
    if not lock.is_file():
        return {}
    try:
        data = yaml.safe_load(lock.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    out = {}
    for e in data.get("packages") or [] if isinstance(data, dict) else []:
        if isinstance(e, dict):
            for key in REMOTE_KEYS:
                if key in e:
                    out[str(e[key])] = str(e.get("version") or e.get("revision") or "")
                    if e.get("name"):
                        out[str(e["name"])] = out[str(e[key])]
    return out


def _local_closure(root: Path, entries: list, plan: PackagePlan, origin: Path) -> list:
    """Resolve local packages (nested included) into plan.links; returns the remote entries met.
    Paths leading outside the project `origin` (whose copy `root` may be) resolve against it."""
    remote: list = []
    seen: set[str] = set()
    queue = [(e, "packages.yml") for e in entries]
    while queue:
        entry, where = queue.pop(0)
        if is_remote(entry):
            remote.append(entry)
            continue
        if not (isinstance(entry, dict) and isinstance(entry.get("local"), str)) or "{{" in entry["local"]:
            continue
        local = entry["local"]
        if local in seen:
            continue
        seen.add(local)
        target = Path(os.path.normpath(root / Path(local).expanduser()))
        real = Path(os.path.normpath(origin / Path(local).expanduser()))
        if not real.is_relative_to(origin):
            target = real  # outside the project: a copy does not hold it
        name = project_name(target)
        if name is None:
            raise InputError(f"local package {local!r} has no readable dbt_project.yml (resolved against "
                             f"the project root: {target})", file=root / where, field="packages")
        if name in plan.links and plan.links[name] != target:
            raise InputError(f"Found duplicate project {name}: {plan.links[name]} and {target} "
                             "(local package paths resolve against the root project directory)",
                             file=root / where, field="packages")
        plan.links[name] = target
        plan.reused.append(ReusedPackage(name, f"local: {local}", target, package_version(target)))
        pf = package_file(target)
        if pf is not None:
            nested = _load(pf).get("packages") or []
            queue.extend((e, str(pf.relative_to(root)) if pf.is_relative_to(root) else str(pf))
                         for e in nested if isinstance(nested, list))
    return remote


def plan_packages(project_dir: Path, *, store: Path | None = None, origin: Path | None = None
                  ) -> PackagePlan:
    """What `dbt deps` would install for `project_dir`, from local paths and `store` (the user's
    installed packages; default `<project>/<packages-install-path>`). `origin`: the project
    `project_dir` is a copy of (local paths leading outside it resolve there). InputError when
    hub/git packages are declared but not installed."""
    root = Path(project_dir).resolve()
    plan = PackagePlan()
    remote = _local_closure(root, package_entries(root), plan, Path(origin).resolve() if origin else root)
    if not remote:
        return plan
    plan.remote = True
    store = Path(store) if store is not None else root / install_path(root)
    if not store.is_absolute():
        store = root / store
    if not store.is_dir():
        raise InputError(
            "the project uses hub/git packages that are not installed: run `dbt deps` in the project "
            "first (adegen works offline and only reads the installed packages, "
            f"{', '.join(describe(e) for e in remote)})", file=root, field="packages")
    locked = _lock_versions(root)
    for d in sorted(store.iterdir()):
        if not d.is_dir() or d.name.startswith(".") or d.name in plan.links:
            continue
        name = project_name(d) or d.name
        version = package_version(d)
        entry = next((e for e in remote if _entry_matches(e, name)), None)
        source = describe(entry) if entry else "installed dependency"
        want = locked.get(str(entry.get("package") or entry.get("git") or "")) if entry else locked.get(name)
        if want and version and want.lstrip("v") != version.lstrip("v") and "package" in (entry or {}):
            plan.notes.append(f"{name}: package-lock.yml pins {want}, dbt_packages has {version}; "
                              "the installed version is used")
        plan.links[d.name] = d.resolve()
        plan.reused.append(ReusedPackage(name, source, d.resolve(), version))
    missing = [describe(e) for e in remote if not any(_entry_matches(e, p.name) for p in plan.reused)]
    installed = [p for p in plan.reused if not p.source.startswith("local:")]
    if missing and len(installed) < len(remote):
        raise InputError(f"hub/git package(s) declared but not installed in {store}: {', '.join(missing)}; "
                         "run `dbt deps` in the project first", file=root, field="packages")
    if missing:
        plan.notes.append(f"could not tell which installed package is {', '.join(missing)}; every "
                          f"installed package of {store} is used")
    return plan


def _entry_matches(entry: dict, name: str) -> bool:
    """Does a hub/git entry name the installed package `name`? (hub: `org/name`, git: repo url)"""
    ref = str(entry.get("package") or entry.get("git") or entry.get("tarball") or entry.get("private") or "")
    ref = ref.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1].lower()
    n = name.lower()
    return bool(ref) and (ref == n or ref.removeprefix("dbt_") == n or ref.removeprefix("dbt-") == n
                          or ref.replace("-", "_") == n or str(entry.get("name") or "").lower() == n)


def install(plan: PackagePlan, dest: Path, *, extra: dict[str, Path] | None = None) -> list[str]:
    """Make `dest` (an install directory) hold one symlink per planned package (+ `extra`), what
    `dbt deps` leaves; other entries of `dest` are removed. Returns the installed names."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    links = {**plan.links, **(extra or {})}
    for p in dest.iterdir():
        if p.name not in links or not p.is_symlink() or os.readlink(p) != str(links[p.name]):
            if p.is_dir() and not p.is_symlink():
                import shutil

                shutil.rmtree(p)
            else:
                p.unlink()
    for name, target in links.items():
        link = dest / name
        if not link.is_symlink():
            link.symlink_to(target, target_is_directory=True)
    return sorted(links)


def localize_outside_paths(copy_dir: Path, origin: Path) -> bool:
    """In the copy's packages.yml / dependencies.yml, make `local:` paths that lead outside the
    project `origin` absolute (a copy elsewhere would not find them; paths inside the project stay
    as written, the copy holds them). package-lock.yml is dropped when an entry changed (it records
    the old path). Returns whether anything changed."""
    f = package_file(copy_dir)
    if f is None:
        return False
    data = _load(f)
    origin = Path(origin).resolve()
    changed = False
    for entry in data.get("packages") or []:
        if isinstance(entry, dict) and isinstance(entry.get("local"), str) and "{{" not in entry["local"]:
            local = Path(entry["local"]).expanduser()
            real = Path(os.path.normpath(origin / local))
            if not local.is_absolute() and not real.is_relative_to(origin):
                entry["local"] = str(real)
                changed = True
    if changed:
        f.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        (Path(copy_dir) / "package-lock.yml").unlink(missing_ok=True)
    return changed


def install_offline(app: Path, store_project: Path) -> list[str]:
    """Stand in for `dbt deps` in `app`: the packages it declares, local ones resolved in `app`,
    hub/git ones from the installed packages of `store_project`. Returns the installed names."""
    store = Path(store_project) / install_path(Path(store_project))
    plan = plan_packages(app, store=store)
    return install(plan, Path(app) / install_path(Path(app)))


def _main(argv: list[str]) -> int:
    """`dbt deps` of the dbt shim: install_offline(cwd, argv[0])."""
    import sys

    try:
        names = install_offline(Path.cwd(), Path(argv[0]))
    except InputError as exc:
        print(f"dbt deps (offline stand-in) failed: {exc}", file=sys.stderr)
        return 1
    print("dbt deps (offline stand-in, the packages the user has installed): " + ", ".join(names))
    return 0
