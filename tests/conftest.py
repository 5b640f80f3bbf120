"""Fixtures shared by the test modules, over the helpers of tests/harness.py."""

from __future__ import annotations

import os

import openvino as ov
import pytest
from hypothesis import settings

from ov_loops.loopir.passes import base as passes_base
from tests import harness

# The passes' invariant checks (loopir/passes/base.py: a debug switch, off in conversions) are
# on in every test, and in the processes tests start.
passes_base.CHECKS = True
os.environ["OV_LOOPS_CHECKS"] = "1"

# CI draws the same examples on every run (a failure there reproduces here); set
# OV_LOOPS_HYPOTHESIS=explore for fresh random examples on each run.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("OV_LOOPS_HYPOTHESIS", "ci"))


@pytest.fixture(scope="session")
def core() -> ov.Core:
    """The one OpenVINO Core of the test session (ov-loops' own, which harness compiles with)."""
    return harness.core()
