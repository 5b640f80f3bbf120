"""Small helpers to write ONNX test models by hand."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

T = TensorProto
IR_VERSION = 10  # onnxruntime 1.31 reads IR versions up to 13


def typed(name: str, elem_type: int = T.FLOAT, shape=None) -> onnx.ValueInfoProto:
    """A typed value; `shape` None leaves the shape out."""
    return helper.make_tensor_value_info(name, elem_type, shape)


def untyped(name: str) -> onnx.ValueInfoProto:
    """A value with no type information at all (as some producers emit in bodies)."""
    return onnx.ValueInfoProto(name=name)


def const(name: str, value, dtype=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def node(op: str, inputs, outputs, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, list(inputs), list(outputs), **attrs)


def graph(nodes, inputs, outputs, initializers=(), name="g") -> onnx.GraphProto:
    return helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(initializers))


def model(main: onnx.GraphProto, opset: int = 17) -> onnx.ModelProto:
    made = helper.make_model(main, opset_imports=[helper.make_opsetid("", opset)])
    made.ir_version = IR_VERSION
    return made


def loop_body(nodes, carried_in, outputs, initializers=(), iteration="i", condition="cond_in"):
    """A Loop body with inputs (iteration, condition, *carried_in) and the given outputs."""
    inputs = [typed(iteration, T.INT64, []), typed(condition, T.BOOL, []), *carried_in]
    return graph(nodes, inputs, outputs, initializers, name="body")
