"""The `ov-loops` command line."""

from ov_loops.cli.main import main

__all__ = ["main"]
