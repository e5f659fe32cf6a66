"""`python -m adegen.report`: the review page of an output directory (adegen.report.command.main; `adegen report` runs the same)."""
from adegen.core.commandline import start

start("adegen.report.command")
