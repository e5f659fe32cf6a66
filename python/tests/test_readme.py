"""The README is for users: short, free of commit hashes (history lives in bench/RESULTS.md and
CHANGELOG.md), and it shows the two commands exactly as they run - the second one is what `.ci/run`
runs. The documentation's links and the paths it names point at things that exist."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
MAX_LINES = 450

DEMO = "python -m pip install -e . -c constraints.txt && python -m adegen.build integration_tests --pick all --yes"
TESTS = 'python -m pip install -e ".[test,test-harness]" -c constraints.txt && python -m pytest'

# A commit hash as the history wrote them: 7 to 40 hex digits, holding a letter and a digit (so plain
# numbers such as 100000 and words such as "defaced" are not one).
HASH_RE = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")

LINKED_DOCS = ["README.md", "CHANGELOG.md", "bench/README.md", "bench/RESULTS.md", *sorted(
    p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))]


def _text(rel: str) -> str:
    return (REPO / rel).read_text(encoding="utf-8")


def _outside_code(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown file's headings (lower case, punctuation dropped, spaces to
    hyphens, -1, -2 ... for repeats)."""
    found, count = set(), {}
    for line in _outside_code(text):
        m = re.match(r"#{1,6} (.+)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = count.get(slug, 0)
            count[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def test_the_readme_is_short():
    n = README.read_text(encoding="utf-8").count("\n")
    assert n < MAX_LINES, f"README.md has {n} lines; history goes to bench/RESULTS.md, design to docs/"


def test_the_readme_names_no_commit():
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1)
            if HASH_RE.search(line)]
    assert not hits, "commit hashes belong in bench/RESULTS.md or CHANGELOG.md:\n" + "\n".join(hits)


def test_the_hash_pattern():
    assert HASH_RE.search("measured at 8b6fb10 on") and HASH_RE.search("(c621fbe)")
    assert HASH_RE.search("commit 3c1e878e0a6d2f31f5a0b6a3c9f2e1d4b5a6c7d8 today")
    assert not any(HASH_RE.search(s) for s in ("default 100000", "defaced", "acme001", "ade_bench_equality_test",
                                               "report-example.png", "1,234,567"))


def test_the_two_commands_as_they_run():
    section = README.read_text(encoding="utf-8").split("## Two commands\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)\n```", section, re.S)
    assert blocks[:2] == [DEMO, TESTS]
    ci = [line for line in _text(".ci/run").splitlines() if line.strip() and not line.startswith("#")]
    assert ci[-1] == TESTS, "the README's test command is what .ci/run runs"


def test_local_links_and_anchors_resolve():
    broken = []
    for rel in LINKED_DOCS:
        for line in _outside_code(_text(rel)):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue  # https://, mailto:
                path, _, anchor = target.partition("#")
                dest = (REPO / rel).parent / path if path else REPO / rel
                if not dest.exists():
                    broken.append(f"{rel}: {target} (no such file)")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
                    broken.append(f"{rel}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_anchor_rule():
    text = "# A\n## Bulk mode: hundreds of proven tasks\n```\n# not a heading\n```\n## 2026-12-03: `--x` y\n## A\n"
    assert anchors(text) == {"a", "bulk-mode-hundreds-of-proven-tasks", "2026-12-03---x-y", "a-1"}


def _exists(path: str, base: Path) -> bool:
    return any(base.glob(path)) if "*" in path else (base / path).exists()


def test_paths_the_readme_names_exist():
    named = set(re.findall(r"`((?:python|docs|bench|patterns|macros|constraints)/[^`\s<>]+)`", README.read_text()))
    missing = sorted(p for p in named if not _exists(p, REPO))
    assert not missing, missing


def test_paths_of_where_each_change_goes_exist():
    """docs/architecture.md's table names modules relative to python/adegen/ (or a top-level folder)."""
    text = _text("docs/architecture.md")
    section = text.split("### Where each kind of change goes\n", 1)[1].split("\n#", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| "))
    named = set(re.findall(r"`([\w.*-]+/[\w./*-]*)`", table))
    assert len(named) > 20
    top = {p.name for p in REPO.iterdir()}
    missing = sorted(p for p in named
                     if not _exists(p, REPO if p.split("/")[0] in top else REPO / "python" / "adegen"))
    assert not missing, missing
