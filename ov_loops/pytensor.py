"""PyTensor's OpenVINO backend: importing this module registers the linker "openvino" and the
mode "OPENVINO", so that `pytensor.function(inputs, outputs, mode="OPENVINO")` runs the graph
as one OpenVINO model (frontends/pytensor/: Ops translated by dispatch, scans through LoopIR).

    import ov_loops.pytensor  # noqa: F401
    f = pytensor.function([x], y, mode="OPENVINO")
"""

from __future__ import annotations

from pytensor.compile.mode import (
    Mode,
    predefined_linkers,
    predefined_modes,
    register_linker,
    register_mode,
)
from pytensor.graph.rewriting.db import RewriteDatabaseQuery

from ov_loops.frontends.pytensor.dispatch import UnsupportedOpError, ov_translate
from ov_loops.frontends.pytensor.linker import OpenVINOLinker

__all__ = ["OPENVINO", "OpenVINOLinker", "UnsupportedOpError", "ov_translate"]

if "openvino" not in predefined_linkers:
    register_linker("openvino", OpenVINOLinker())
# fast_run, and the scan buffers shrunk to what the graph reads as PyTensor's JAX and Numba
# modes shrink them (no preallocation): a scan whose last value only is read keeps one row, which
# its Loop carries without stacking every step's (frontends/pytensor/scan.py).
QUERY = RewriteDatabaseQuery(include=["fast_run", "scan_save_mem_no_prealloc"])
if "OPENVINO" not in predefined_modes:
    register_mode("OPENVINO", Mode(OpenVINOLinker(), QUERY))
OPENVINO = predefined_modes["OPENVINO"]
