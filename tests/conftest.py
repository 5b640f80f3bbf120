"""Fixtures shared by the test modules, over the helpers of tests/harness.py."""

from __future__ import annotations

import contextlib
import ctypes
import os

import openvino as ov
import pytest
from hypothesis import settings

from tests import harness

# CI draws the same examples on every run (a failure there reproduces here); set
# OV_LOOPS_HYPOTHESIS=explore for fresh random examples on each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("OV_LOOPS_HYPOTHESIS", "ci"))


def _zero_filled_allocations() -> None:
    """glibc's malloc zero-fills what it hands out, here and in child processes (the device
    worker, CLI runs). OpenVINO's CPU plugin (2026.4.1) reads uninitialised memory in the
    shape inference of a Range in a Loop body (a list edited by SequenceErase and
    SequenceInsert in turn, `list_starting_non_empty_read_and_written_by_position`): on about
    1-3% of first inferences after a compile it allocates 0.3-22 GB, results unchanged, which
    got CI OOM-killed. Zero-filled, 0 of 300 compiles did (8 of 300 without). README: pitfalls."""
    os.environ.setdefault("MALLOC_PERTURB_", "255")  # allocations filled with ~255 = 0
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to set
        ctypes.CDLL("libc.so.6").mallopt(-6, 255)  # M_PERTURB, for this process


_zero_filled_allocations()


@pytest.fixture(scope="session")
def core() -> ov.Core:
    """The one OpenVINO Core of the test session (ov-loops' own, which harness compiles with)."""
    return harness.core()
