"""Logging of ov-loops: library code logs to the `ov_loops` loggers and never prints; the CLI
configures them (`configure`). Progress of long work (a loop converted, a stage of a check
done, with its seconds) goes to the `ov_loops.progress` logger, which the CLI shows as lines on
stderr when stderr is a terminal, the work has taken over `PROGRESS_AFTER` seconds and -q was
not given; OV_LOOPS_PROGRESS=1 forces it on (no delay), =0 off."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

PROGRESS = logging.getLogger("ov_loops.progress")
PROGRESS_AFTER = 1.0  # seconds of work before progress lines appear


def progress(what: str, seconds: float) -> None:
    """Report that `what` finished after `seconds`."""
    PROGRESS.info("%s in %.2f s", what, seconds)


@contextmanager
def timed(what: str) -> Iterator[None]:
    """Report `what` with its seconds when the block finishes (not when it raises)."""
    start = time.perf_counter()
    yield
    progress(what, time.perf_counter() - start)


class ProgressHandler(logging.Handler):
    """Writes progress records as `ov-loops: [ELAPSED s] MESSAGE` lines once `after` seconds
    have passed since it was made."""

    def __init__(self, stream, after: float) -> None:
        super().__init__(logging.INFO)
        self.stream = stream
        self.after = after
        self.start = time.perf_counter()

    def emit(self, record: logging.LogRecord) -> None:
        elapsed = time.perf_counter() - self.start
        if elapsed >= self.after:
            self.stream.write(f"ov-loops: [{elapsed:6.1f} s] {record.getMessage()}\n")
            self.stream.flush()


def configure(verbosity: int, stream=None) -> None:
    """Set up the `ov_loops` loggers for the CLI: -q (verbosity < 0) errors only, default
    warnings, -v info, -vv debug; messages as `ov-loops: LEVEL: message` on `stream` (stderr).
    Progress lines as the module says. Calling it again replaces what it set up."""
    stream = stream or sys.stderr
    root = _root()
    for logger in (root, PROGRESS):
        for handler in [h for h in logger.handlers if getattr(h, "_ov_loops_cli", False)]:
            logger.removeHandler(handler)
    level = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("ov-loops: %(levelname)s: %(message)s"))
    handler._ov_loops_cli = True
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
    forced = os.environ.get("OV_LOOPS_PROGRESS", "")
    shown = forced == "1" or (forced != "0" and _is_terminal(stream))
    PROGRESS.propagate = not (shown and verbosity >= 0)
    if shown and verbosity >= 0:
        progress_handler = ProgressHandler(stream, 0.0 if forced == "1" else PROGRESS_AFTER)
        progress_handler._ov_loops_cli = True
        PROGRESS.addHandler(progress_handler)
        PROGRESS.setLevel(logging.INFO)
    else:
        PROGRESS.setLevel(logging.NOTSET)


@contextmanager
def configured(verbosity: int, stream=None) -> Iterator[None]:
    """`configure` for the duration of the block, then put the `ov_loops` loggers back as they
    were (handlers, levels, propagation): `cli.main` run inside a program or a test leaves no
    handler behind on a stream that may be closed by then."""
    saved = [(lg, list(lg.handlers), lg.level, lg.propagate) for lg in (_root(), PROGRESS)]
    configure(verbosity, stream)
    try:
        yield
    finally:
        for logger, handlers, level, propagate in saved:
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate = propagate


def _root() -> logging.Logger:
    return logging.getLogger("ov_loops")


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
