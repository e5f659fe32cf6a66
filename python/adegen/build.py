"""`python -m adegen.build PROJECT_DIR`: the same as `adegen build` (adegen.cli.build)."""
if __name__ == "__main__":
    # through the console script's entry, which also ends a Ctrl-C during the imports cleanly
    from adegen.cli.main import cli as _cli

    _cli("build")
else:
    from adegen.cli.build import cli, main  # noqa: F401 - the module entry point's face
