"""`ov_loops.check`: run a model on a device and compare it with a numpy reference.

inputs (read or generated), device (compile and run, in a child process), diff (an output
against its reference), divergence (the first diverging iteration), run (the check itself).
"""

from __future__ import annotations

from ov_loops.checking.run import CheckReport, check

__all__ = ["CheckReport", "check"]
