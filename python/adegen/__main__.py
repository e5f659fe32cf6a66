"""`python -m adegen` = `python -m adegen.build`."""
from .build import main
from .cli import exit_with

exit_with(main())
