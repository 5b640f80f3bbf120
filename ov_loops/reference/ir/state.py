"""IR reference kernels of OpenVINO's state ops, ReadValue-6 and Assign-6, for one pass: one
inference call from a fresh (or reset) state, so a Variable always holds its initial value.

Semantics (OpenVINO op specs "ReadValue-6", "Assign-6"), for the first call after a reset::

    ReadValue(init, variable_id) = init                   # the variable was not set yet
    ReadValue(variable_id)       = zeros(variable_shape, variable_type)   # no init input
    Assign(value, variable_id)   : variable <- value      # read by the next call only: a sink

Calls after the first (a sequence fed in chunks) are the device's business: `ov-loops check
--chunks` compares them with one pass of the reference over the whole sequence.
"""

from __future__ import annotations

import numpy as np

from ov_loops.errors import InputError
from ov_loops.reference.ir.dtypes import numpy_type


def _read_value(layer, x: list[np.ndarray]) -> list[np.ndarray]:
    """ReadValue-6 (spec "ReadValue-6") on a fresh state::

    out = init if an init input is wired else zeros(variable_shape, dtype=variable_type)

    Without an init input the shape must be static (else a one-line InputError)."""
    if x:
        return [x[0]]
    variable = layer.data.get("variable_id", layer.name)
    shape_text = layer.data.get("variable_shape", "")
    dims = [d.strip() for d in shape_text.split(",") if d.strip()]
    if not all(d.isdigit() for d in dims) or "..." in shape_text:
        raise InputError(
            f"IR reference: ReadValue '{layer.name}' of variable '{variable}' has no initial "
            f"value and a dynamic shape [{shape_text}]: its first value is unknown"
        )
    type_name = layer.data.get("variable_type", "f32")
    if type_name == "dynamic":
        raise InputError(
            f"IR reference: ReadValue '{layer.name}' of variable '{variable}' has no initial "
            "value and a dynamic type: its first value is unknown"
        )
    return [np.zeros([int(d) for d in dims], numpy_type(type_name))]


def _assign(layer, x: list[np.ndarray]) -> list[np.ndarray]:
    """Assign-6 (spec "Assign-6")::

    variable[variable_id] = value   # for the next call; nothing the first call reads

    A sink: its (unused) output, where the IR has one, is the value stored."""
    return [x[0]]


STATE_KERNELS = {"ReadValue": _read_value, "Assign": _assign}
