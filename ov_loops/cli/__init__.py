"""The `ov-loops` command line (`main`: the console script and `python -m ov_loops`): main.py
the parser and dispatch; convert.py, validate.py, check.py each command's options and call;
output.py the options every command shares."""

from ov_loops.cli.main import main

__all__ = ["main"]
