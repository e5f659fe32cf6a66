"""The package's layers, as docs/architecture.md ("Layers") draws them, held against the code: every
import of adegen (a function's too) goes from a package to one on a lower line of the block, never up or
sideways, and every package and top-level module is on the block. No dbt, no database: a scan of the
source."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADEGEN = REPO / "python" / "adegen"


def documented_layers() -> list[list[str]]:
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no ```layers block"
    return [line.split() for line in block.group(1).splitlines() if line.strip()]


def room_of(module: str) -> str:
    """adegen.validate.rules.proof -> validate; adegen.build -> build."""
    return module.split(".")[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(ADEGEN.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported adegen module or package member) of every import in the file, absolute or
    relative, at any depth."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("adegen.")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == "adegen":  # from adegen import x: x is the room (or the version string)
                found += [(node.lineno, f"adegen.{a.name}") for a in node.names if a.name != "__version__"]
            elif module.startswith("adegen."):
                found.append((node.lineno, module))
    return found


def rooms() -> set[str]:
    names = {p.stem for p in ADEGEN.glob("*.py") if p.name != "__init__.py"}
    return names | {p.name for p in ADEGEN.iterdir() if (p / "__init__.py").is_file()}


def test_every_package_is_on_the_layer_block():
    on_block = [r for line in documented_layers() for r in line]
    assert len(on_block) == len(set(on_block)), "a package stands twice on the layer block"
    assert set(on_block) == rooms(), (
        f"not on the block: {sorted(rooms() - set(on_block))}; on the block but gone: {sorted(set(on_block) - rooms())}")


def test_no_import_runs_up_or_sideways():
    level = {r: i for i, line in enumerate(documented_layers()) for r in line}
    wrong = []
    for path in sorted(ADEGEN.rglob("*.py")):
        if path == ADEGEN / "__init__.py":
            continue
        here = room_of(module_name(path))
        for line, target in imports(path):
            there = room_of(target)
            if there != here and level.get(there, -1) <= level.get(here, -1):
                way = "sideways" if level.get(there) == level.get(here) else "up"
                wrong.append(f"{path.relative_to(ADEGEN)}:{line} imports {target} ({here} -> {there}, {way})")
    assert not wrong, "imports against docs/architecture.md's layers:\n" + "\n".join(wrong)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The scan itself: a relative import is resolved, and `from adegen import x` names room x."""
    pkg = tmp_path / "adegen" / "core"
    pkg.mkdir(parents=True)
    (tmp_path / "adegen" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("def f():\n    from ..pipeline import run\nfrom adegen import tasks\n")
    global ADEGEN
    saved, ADEGEN = ADEGEN, tmp_path / "adegen"
    try:
        assert sorted(t for _, t in imports(pkg / "low.py")) == ["adegen.pipeline", "adegen.tasks"]
    finally:
        ADEGEN = saved
