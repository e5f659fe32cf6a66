"""`python -m adegen ...` = the `adegen` command (`python -m adegen PROJECT_DIR` builds, as always)."""
from adegen.cli.main import cli

cli()
