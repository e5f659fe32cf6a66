"""`python -m adegen.calibrate`: measured difficulty of written tasks (adegen.calibrate.command.main;
`adegen calibrate` runs the same)."""
from adegen.calibrate.command import main
from adegen.core.commandline import exit_with

exit_with(main())
