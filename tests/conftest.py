"""Fixtures shared by the test modules, over the helpers of tests/harness.py."""

from __future__ import annotations

import openvino as ov
import pytest

from tests import harness


@pytest.fixture(scope="session")
def core() -> ov.Core:
    """The one OpenVINO Core of the test session (ov-loops' own, which harness compiles with)."""
    return harness.core()
