"""`python -m adegen` = `python -m adegen.build`."""
import sys

from .build import exit_with, main

exit_with(main())
