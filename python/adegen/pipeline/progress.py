"""Bulk mode's console: a one-line progress bar (proven, dropped by reason, ETA) on a terminal,
one plain line per decided candidate otherwise. While candidates are processed, the stages'
own chatter (screening, proving) goes only to `<output>/.adegen/bulk.log`."""
from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

from .context import UI

BAR_WIDTH = 24


class BulkUI(UI):
    """The build's UI, whose say/progress lines also go to a log file and, while `quiet`, only there."""

    def __init__(self, json_mode: bool, log_path: Path):
        super().__init__(json_mode, interactive=False)
        self.log_path = log_path
        self.quiet = False
        self._log = None
        self._lock = threading.Lock()  # proofs and background screening report from their threads

    def _write_log(self, text: str) -> None:
        with self._lock:
            if self._log is None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
            self._log.write(text + "\n")
            self._log.flush()

    def say(self, text: str = "") -> None:
        self._write_log(text)
        if not self.quiet:
            super().say(text)

    def warn(self, text: str) -> None:
        self._write_log(f"warning: {text}")
        if not self.quiet:
            super().warn(text)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


class Progress:
    """Counts of the loop and their display; `tty` decides bar or plain lines."""

    def __init__(self, ui: UI, want: int, start: tuple[int, int]):
        self.out = ui.out
        self.tty = bool(getattr(self.out, "isatty", lambda: False)()) and not ui.json_mode
        self.want, self.t0 = want, time.monotonic()
        self.start_proven, self.start_decided = start
        self.last_len = 0

    def eta(self, proven: int) -> str:
        done = proven - self.start_proven
        if done <= 0:
            return "ETA --"
        left = (time.monotonic() - self.t0) / done * max(self.want - proven, 0)
        return f"ETA {int(left // 60)}m{int(left % 60):02d}s"

    def update(self, proven: int, drops: dict[str, int], event: str) -> None:
        dropped = ", ".join(f"{k} {n}" for k, n in sorted(drops.items(), key=lambda kv: (-kv[1], kv[0])))
        counts = f"{proven}/{self.want} proven, dropped {sum(drops.values())}" + (f" ({dropped})" if dropped else "")
        if not self.tty:
            print(f"[{proven}/{self.want}] {event}", file=self.out, flush=True)
            return
        filled = int(BAR_WIDTH * min(proven, self.want) / max(self.want, 1))
        line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {counts} | {self.eta(proven)}"
        width = shutil.get_terminal_size((100, 20)).columns - 1
        line = line[:width]
        self.out.write("\r" + line + " " * max(self.last_len - len(line), 0))
        self.out.flush()
        self.last_len = len(line)

    def finish(self) -> None:
        if self.tty and self.last_len:
            self.out.write("\n")
            self.out.flush()

