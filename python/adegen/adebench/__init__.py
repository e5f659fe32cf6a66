"""ade-bench compatibility: where ade-bench is installed (`install`), the limits of its harness (`limits`),
its test procedure emulated without Docker (`procedure`), and the real harness run for `--run-harness`
(`harness_run`)."""
