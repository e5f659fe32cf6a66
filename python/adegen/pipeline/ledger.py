"""Bulk mode's state file: `<output>/.adegen/bulk/<key>.json`, rewritten atomically after every
committed task (temp file + rename), so a run killed at any point - SIGKILL included - resumes
where it stopped.

It holds how far the ordered candidate list was processed (`cursor`), the tasks written (their
tasks.jsonl rows plus their prompt texts, which later candidates must not repeat), the drop counts
by code (`drops.DropCode` ids), and at most one `pending` commit: written just before a proven task is renamed into
place, cleared right after. On resume a pending task whose directory exists is counted as written;
otherwise it was never renamed (its temp dir is removed with the other stale ones) and its
candidate is tried again - with the same id and, the run being deterministic, the same result.

`key` hashes the options that decide the output (project, seed, catalog, database options), not
--tasks or --jobs: a rerun with a higher --tasks continues, any --jobs gives the same tasks."""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from adegen.core.drops import DropCode, regroup
from adegen.core.errors import InputError
from adegen.core.atomic import TMP_PREFIX, write_text_atomic

LEDGER_VERSION = 1
LEDGER_DIR = Path(".adegen") / "bulk"


def options_key(fields: dict) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:12]


@dataclass
class Ledger:
    path: Path
    key: str
    options: dict  # what the key was made of (for a reader)
    units: str  # fingerprint of the ordered candidate list
    base_number: int  # the highest task number before the first task of this run
    cursor: int = 0  # candidates [0, cursor) are decided
    tasks: list[dict] = field(default_factory=list)  # ledger rows, in commit order
    drops: dict[str, int] = field(default_factory=dict)  # DropCode id -> candidates
    pending: dict | None = None  # {"cursor", "row"} of the task being renamed into place
    facts: dict = field(default_factory=dict)  # the run's dataset facts (a plan's DATASET.md reads them back)
    version: int = LEDGER_VERSION

    @classmethod
    def open(cls, output_dir: Path, options: dict) -> "Ledger":
        """The run's ledger: the one on disk for these options, else a new one (unbound: `bind`)."""
        key = options_key(options)
        path = output_dir / LEDGER_DIR / f"{key}.json"
        if not path.is_file():
            return cls(path, key, options, units="", base_number=-1)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            led = cls(path, **data)
            led.drops = regroup(led.drops, "id")  # a ledger written before the codes counts by label
        except (OSError, ValueError, TypeError) as exc:
            raise InputError(f"unreadable bulk state ({exc}); delete it to start over", file=path) from None
        if led.version != LEDGER_VERSION:
            raise InputError(f"bulk state of version {led.version}, this adegen writes {LEDGER_VERSION}; "
                             "use another --output-dir", file=path)
        return led

    def bind(self, units: str, base_number: int) -> None:
        """A new ledger takes the candidate list and the first free number; a resumed one must have
        been made for the same candidate list (else its cursor means nothing: refused)."""
        if self.base_number < 0:
            self.units, self.base_number = units, base_number
            self.save()
        elif self.units != units:
            raise InputError("the project, its data or the pattern catalog changed since this bulk run started "
                             "(other candidates now); use another --output-dir or delete this file to start "
                             "over", file=self.path, field="units")

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc = asdict(self)
        doc.pop("path")
        write_text_atomic(self.path, json.dumps(doc, indent=1, default=str) + "\n", tmp_prefix=TMP_PREFIX)

    def recover(self, tasks_dir: Path) -> None:
        """Settle a commit a killed run left pending (see the module doc)."""
        if self.pending is None:
            return
        row = self.pending["row"]
        if (tasks_dir / row["id"]).is_dir():
            self.tasks.append(row)
            self.cursor = self.pending["cursor"]
        self.pending = None
        self.save()

    def task_ids(self) -> set[str]:
        return {t["id"] for t in self.tasks} | ({self.pending["row"]["id"]} if self.pending else set())

    def next_number(self) -> int:
        return self.base_number + len(self.tasks) + 1

    def drop(self, code: DropCode) -> None:
        self.drops[code.id] = self.drops.get(code.id, 0) + 1
        self.cursor += 1

    def drops_by_label(self) -> dict[str, int]:
        """The drop counts as DATASET.md and the progress line show them."""
        return regroup(self.drops)

    def begin_commit(self, row: dict) -> None:
        """Recorded before the rename: a kill between the two is settled by `recover`."""
        self.pending = {"cursor": self.cursor + 1, "row": row}
        self.save()

    def end_commit(self) -> None:
        self.tasks.append(self.pending["row"])
        self.cursor = self.pending["cursor"]
        self.pending = None
        self.save()


def clean_stale(output_dir: Path) -> None:
    """Temp files of ledgers a killed run was writing (called with the run lock held)."""
    d = output_dir / LEDGER_DIR
    if d.is_dir():
        for p in d.glob(TMP_PREFIX + "*"):
            p.unlink(missing_ok=True)
