"""`python -m adegen` = `python -m adegen.build`."""
import sys

from .build import main

sys.exit(main())
