"""The command line: `adegen` and its subcommands (`main`), the build's and bulk mode's parsers and entry
points. Stage-owned commands (calibrate, report) keep their parser in their own package."""
