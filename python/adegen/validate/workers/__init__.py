"""Where the validator's jobs run: the local worker pool, the Dask executor, and the budgets a job runs in."""
