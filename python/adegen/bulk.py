"""`python -m adegen.bulk PROJECT_DIR --tasks N`: the same as `adegen bulk` (adegen.cli.bulk)."""
if __name__ == "__main__":
    # through the console script's entry, which also ends a Ctrl-C during the imports cleanly
    from adegen.cli.main import cli as _cli

    _cli("bulk")
else:
    from adegen.cli.bulk import main  # noqa: F401 - the module entry point's face
