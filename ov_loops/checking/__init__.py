"""`ov_loops.check`: run a model on a device and compare it with a numpy reference.

inputs (read or generated), device (compile and run, in a child process), diff (an output
against its reference), tolerance (by precision, overridable), opinions (onnxruntime,
openvino.convert_model, saved outputs), divergence (the first diverging iteration), report
(text and JSON), run (the check itself); its command line is cli/check.py. `check` and
`CheckReport` are resolved on first use, so the command line loads no OpenVINO until it checks.
"""

from __future__ import annotations

__all__ = ["CheckReport", "check"]


def __getattr__(name: str):
    if name in __all__:
        from ov_loops.checking import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
