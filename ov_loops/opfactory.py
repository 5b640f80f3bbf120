"""Cheap construction of OpenVINO ops, for code that builds ops per loop (the post-loop steps).

`openvino.opsetN`'s functions check their arguments' types through decorators and
`openvino.opsetN.constant` dispatches on overloads: measured on openvino 2026.4.1, 117 us for
a Constant against 14 us for `ov.op.Constant`, 73 us for a Select against 20 us for the node
factory's. At hundreds of loops of a few post-loop ops each that was a tenth of a
conversion's time. Here: a Constant from a numpy value, and any op of opset15 by its type
name and attributes (as `NodeFactory.create` names them), with validated output types.

    op("Select", zero, then, otherwise)          == opset15.select(zero, then, otherwise)
    op("Reshape", x, shape, special_zero=False)  == opset15.reshape(x, shape, False)
"""

from __future__ import annotations

import numpy as np
import openvino as ov
from openvino._pyopenvino import NodeFactory

_OPSET15 = NodeFactory("opset15")


def constant(value, dtype=None) -> ov.Output:
    """A Constant holding `value` (a numpy array or what `np.asarray` takes, as `dtype`)."""
    return ov.op.Constant(np.asarray(value, dtype)).output(0)


def op(kind: str, *inputs: ov.Output | ov.Node, **attributes) -> ov.Node:
    """An opset15 op of type `kind` on `inputs` (a Node is its output 0) with `attributes`."""
    values = [value.output(0) if isinstance(value, ov.Node) else value for value in inputs]
    return _OPSET15.create(kind, values, attributes)
