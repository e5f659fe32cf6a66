"""`python -m adegen.discover`: the discovery payload of a project (adegen.discover.payload.main; `adegen discover` runs the same)."""
import sys

from adegen.discover.payload import main

sys.exit(main())
