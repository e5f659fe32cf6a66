"""`python -m adegen.bulk PROJECT_DIR --tasks N`: the same as `adegen bulk` (adegen.cli.bulk)."""
from adegen.cli.bulk import main  # noqa: F401 - the module entry point's face
from adegen.core.commandline import exit_with

if __name__ == "__main__":
    exit_with(main())
