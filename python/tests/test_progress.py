"""Bulk mode's console (`pipeline/progress.py`): a bar with proven, drops and ETA on a terminal
(drawn by tqdm), one plain line per decided candidate otherwise, nothing on stdout under --json."""
from __future__ import annotations

import io

from adegen.pipeline.context import UI
from adegen.pipeline.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _ui(out, json_mode: bool = False) -> UI:
    ui = UI(json_mode, interactive=False)
    ui.out = out
    return ui


def test_a_terminal_gets_one_bar_with_proven_drops_and_eta():
    out = Terminal()
    p = Progress(_ui(out), 4, (1, 3))  # a resumed run: one task proven before
    p.update(1, {}, "3 candidate(s) to go")
    p.update(2, {"equivalent on this data": 2, "build error": 1}, "acme002: ... proven in 3.1s")
    p.finish()
    text = out.getvalue()
    frames = [f for f in text.split("\r") if f]
    assert "\n" not in "".join(frames[:-1]) and text.endswith("\n")  # one line, redrawn in place
    last = frames[-1].strip()
    assert last.startswith("[############............] 2/4 proven, dropped 3 "
                           "(equivalent on this data 2, build error 1) | ETA ")
    assert "1/4 proven, dropped 0 | ETA ?" in text  # no task of this run yet: no estimate
    assert "candidate(s) to go" not in text  # the events are the plain lines' only


def test_otherwise_one_plain_line_per_decided_candidate():
    out = io.StringIO()
    p = Progress(_ui(out), 4, (0, 0))
    p.update(0, {"rewrite failed": 1}, "dropped stg_orders / p1: rewrite failed")
    p.update(1, {"rewrite failed": 1}, "acme001: stg_orders / p2 (easy) proven in 2.0s")
    p.finish()
    assert out.getvalue() == ("[0/4] dropped stg_orders / p1: rewrite failed\n"
                              "[1/4] acme001: stg_orders / p2 (easy) proven in 2.0s\n")


def test_json_mode_keeps_stdout_for_the_document(capsys):
    ui = UI(json_mode=True, interactive=False)  # its lines go to stderr
    p = Progress(ui, 2, (0, 0))
    p.update(1, {}, "acme001 proven")
    p.finish()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "[1/2] acme001 proven\n"
