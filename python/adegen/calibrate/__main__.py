"""`python -m adegen.calibrate`: measured difficulty of written tasks (adegen.calibrate.command.main;
`adegen calibrate` runs the same)."""
from adegen.core.commandline import start

start("adegen.calibrate.command")
