"""ade-bench's console parser (`DbtParser`, parser_type "dbt") and `Harness._is_resolved`.

Regexes and rules ported from dbt-labs/ade-bench (main) `ade_bench/parsers/dbt_parser.py` and
`ade_bench/harness.py::_is_resolved` (Apache-2.0, see resources/NOTICE.txt). Input is the text of
the `tests` tmux pane: tmux strips ANSI colours, so `strip_ansi` is applied first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from adegen.dbt.result import strip_ansi

TEST_RESULT_PATTERN = (
    r"\d+\s+of\s+\d+\s+(PASS|FAIL|ERROR)(?:\s+\d+)?\s+(\S+)\s+\.+\s+\[(PASS|FAIL|ERROR)"
)
SUMMARY_PATTERN = (
    r"Done\.\s+PASS=(\d+)\s+WARN=(\d+)\s+ERROR=(\d+)\s+SKIP=(\d+)(?:\s+NO-OP=(\d+))?\s+TOTAL=(\d+)"
)
EXPECTED_TEST_COUNT_PATTERN = r"\[ade-bench\] expected_test_count=(\d+)"
# only used to decide "has test results" (as upstream does, all shapes are checked)
_FUSION_TEST_RESULT_PATTERN = r"(Passed|Failed)\s+(?:\[\s*(?:[\d.]+)s\]\s+)?test\s+(\S+)"

PASSED = "passed"
FAILED = "failed"


@dataclass
class ParseResult:
    test_results: dict[str, str]          # name -> "passed" | "failed"; includes "dbt_compile"
    expected_test_count: int | None
    compile_failed: bool
    summary: dict | None = None
    resolved: bool = False
    reason: str = ""
    tests: dict[str, str] = field(default_factory=dict)  # without dbt_compile

    @property
    def parsed_count(self) -> int:
        return len(self.tests)


def _has_test_results(content: str) -> bool:
    return bool(
        re.search(TEST_RESULT_PATTERN, content)
        or re.search(SUMMARY_PATTERN, content)
        or re.search(_FUSION_TEST_RESULT_PATTERN, content)
    )


def parse_dbt_output(content: str) -> ParseResult:
    """Parse a tests pane like `DbtParser("dbt").parse` and apply `_is_resolved`."""
    content = strip_ansi(content)
    compile_failed = "Compilation Error" in content and not _has_test_results(content)
    m = re.search(EXPECTED_TEST_COUNT_PATTERN, content)
    expected = int(m.group(1)) if m else None
    results: dict[str, str] = {"dbt_compile": FAILED if compile_failed else PASSED}
    for match in re.finditer(TEST_RESULT_PATTERN, content):
        status, name = match.group(1), match.group(2)
        results[name] = PASSED if status == "PASS" else FAILED
    summary = None
    sm = list(re.finditer(SUMMARY_PATTERN, content))
    if sm:
        s = sm[-1]
        summary = {"pass": int(s.group(1)), "warn": int(s.group(2)), "error": int(s.group(3)),
                   "skip": int(s.group(4)), "total": int(s.group(6))}
    res = ParseResult(test_results=results, expected_test_count=expected,
                      compile_failed=compile_failed, summary=summary,
                      tests={k: v for k, v in results.items() if k != "dbt_compile"})
    res.resolved, res.reason = is_resolved(res)
    return res


def is_resolved(result: ParseResult | None) -> tuple[bool, str]:
    """`Harness._is_resolved`: no compile failure, >= 1 test, parsed >= expected, all PASS."""
    if result is None:
        return False, "no parser result"
    if result.test_results.get("dbt_compile") == FAILED:
        return False, "dbt compilation error"
    tests = {k: v for k, v in result.test_results.items() if k != "dbt_compile"}
    if not tests:
        return False, "no test results parsed"
    if result.expected_test_count is not None and len(tests) < result.expected_test_count:
        return False, (f"only {len(tests)} test results found, "
                       f"{result.expected_test_count} expected")
    failed = sorted(k for k, v in tests.items() if v != PASSED)
    if failed:
        return False, "failing tests: " + ", ".join(failed)
    return True, f"all {len(tests)} tests passed"
