"""What ade-bench's harness can read: limits of ade-bench itself, not choices of adegen.

A leaf, so the task writer (`taskgen`, `stand_in_tests`) and the harness emulation
(`harness.testgen`) share one number without the writer importing the emulation."""
from __future__ import annotations

# The longest test name (file stem) ade-bench's console parser counts: it stops seeing names of
# about 60 characters (harness notes, section 8); 55 keeps a margin.
MAX_TEST_NAME = 55
