"""The process's one `openvino.Core`: creating one loads every plugin, so `check`, the device
worker and `ov_loops.compile` share it."""

from __future__ import annotations

import functools

import openvino as ov


@functools.cache
def core() -> ov.Core:
    """The `openvino.Core` of this process, created on first use."""
    return ov.Core()
