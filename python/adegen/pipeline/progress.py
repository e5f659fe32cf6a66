"""Bulk mode's console: a one-line progress bar (proven, dropped by reason, ETA; drawn by tqdm) on a
terminal, one plain line per decided candidate otherwise. While candidates are processed, the
stages' own chatter (screening, proving) goes only to `<output>/.adegen/bulk.log`."""
from __future__ import annotations

import threading
from pathlib import Path

from tqdm import tqdm

from adegen.pipeline.context import UI

# "[#######.................] 3/10 proven, dropped 2 (equivalent on this data 2) | ETA 01:20"
BAR_FORMAT = "[{bar:24}] {n}/{total} proven{postfix} | ETA {remaining}"


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
    """Counts of the loop and their display: on a terminal a tqdm bar (proven of wanted, dropped by
    reason, ETA from the rate of this run's tasks), otherwise one plain line per decided candidate;
    in --json mode the lines go to stderr (`UI.out`), so stdout stays one JSON document."""

    def __init__(self, ui: UI, want: int, start: tuple[int, int]):
        self.out = ui.out
        self.tty = bool(getattr(self.out, "isatty", lambda: False)()) and not ui.json_mode
        self.want = want
        start_proven, _start_decided = start
        self.bar = None
        if self.tty:
            # `initial`: tasks of an earlier run count as proven, not in the rate behind the ETA
            self.bar = tqdm(total=want, initial=start_proven, file=self.out, bar_format=BAR_FORMAT, ascii=".#",
                            postfix="dropped 0", dynamic_ncols=True, mininterval=0, leave=True)

    def update(self, proven: int, drops: dict[str, int], event: str) -> None:
        if self.bar is None:
            print(f"[{proven}/{self.want}] {event}", file=self.out, flush=True)
            return
        dropped = ", ".join(f"{k} {n}" for k, n in sorted(drops.items(), key=lambda kv: (-kv[1], kv[0])))
        self.bar.n = proven
        self.bar.set_postfix_str(f"dropped {sum(drops.values())}" + (f" ({dropped})" if dropped else ""),
                                 refresh=False)
        self.bar.refresh()

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
