"""`python -m adegen.build PROJECT_DIR`: the same as `adegen build` (adegen.cli.build)."""
from adegen.cli.build import cli, main  # noqa: F401 - the module entry point's face

if __name__ == "__main__":
    cli()
