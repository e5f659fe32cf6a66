"""The run's validator while its baseline builds: a background thread runs `baseline()` (the work
itself happens in the validator's worker processes) and `result()` waits for it."""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # the validator package imports duckdb and dbt: not at the command's start
    from adegen.validate.rules.contract import ValidatorProtocol


class PendingValidator:
    """A Validator whose baseline build runs in a background thread (the work itself happens in
    the validator's worker processes)."""

    def __init__(self, validator: ValidatorProtocol, warn: Callable[[str], None]):
        self.validator = validator
        self.warn = warn
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="adegen-baseline", daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.validator.baseline()
        except BaseException as exc:  # noqa: BLE001 - reported in result()
            self.error = exc

    def result(self) -> tuple[ValidatorProtocol | None, str]:
        """(the validator, "ok") once its baseline is built, else (None, why)."""
        self.thread.join()
        if self.error is not None:
            exc = self.error
            self.warn(f"baseline build failed ({exc}); tasks will be patch-validated only (status: dev)")
            return None, f"baseline failed: {exc}"
        return self.validator, "ok"
