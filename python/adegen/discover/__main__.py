"""`python -m adegen.discover`: the discovery payload of a project (adegen.discover.payload.main; `adegen discover` runs the same)."""
from adegen.core.commandline import start

start("adegen.discover.payload")
