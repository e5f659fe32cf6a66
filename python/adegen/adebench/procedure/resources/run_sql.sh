#!/bin/bash
# adegen's stand-in for ade-bench's /scripts/run_sql.sh (not a copy): the same call, SQL on stdin
# or --sql-file, run on the database the project's profile names (see run_sql.py beside it).
exec python3 /scripts/run_sql.py "$@"
