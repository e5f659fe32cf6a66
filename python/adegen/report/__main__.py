"""`python -m adegen.report`: the review page of an output directory (adegen.report.command.main; `adegen report` runs the same)."""
import sys

from adegen.report.command import main

sys.exit(main())
