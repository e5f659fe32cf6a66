#!/bin/bash
# Vendored from dbt-labs/ade-bench: shared/defaults/run-tests.sh (Apache-2.0, see NOTICE.txt).
# Unchanged apart from this header; adegen maps /scripts to a scratch directory before running it.
source /scripts/setup-dbt-test.sh

# Pass through all arguments to run-dbt-test.sh
bash /scripts/run-dbt-test.sh "$@"
