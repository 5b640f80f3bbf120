"""Small helpers to write ONNX test models by hand."""

from __future__ import annotations

import ml_dtypes
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


ELEMENT_TYPES = {
    "int8": (T.INT8, np.int8),
    "uint8": (T.UINT8, np.uint8),
    "int16": (T.INT16, np.int16),
    "uint16": (T.UINT16, np.uint16),
    "int32": (T.INT32, np.int32),
    "uint32": (T.UINT32, np.uint32),
    "int64": (T.INT64, np.int64),
    "uint64": (T.UINT64, np.uint64),
    "float16": (T.FLOAT16, np.float16),
    "bfloat16": (T.BFLOAT16, ml_dtypes.bfloat16),
    "float32": (T.FLOAT, np.float32),
    "float64": (T.DOUBLE, np.float64),
    "bool": (T.BOOL, np.bool_),
}


def side_by_side_loops(count: int) -> onnx.ModelProto:
    """`count` independent counting Loops, each with a scan output and a nested Loop."""
    inner = loop_body(
        [node("Add", ["t_in", "one"], ["t_out"]), node("Identity", ["cond_in"], ["go"])],
        [typed("t_in", T.FLOAT, [])],
        [typed("go", T.BOOL, []), typed("t_out", T.FLOAT, [])],
        iteration="j",
    )
    nodes, outputs = [], []
    for index in range(count):
        body = loop_body(
            [
                node("Loop", ["M", "", "s_in"], ["s_out"], body=inner),
                node("Identity", ["s_out"], ["s_scan"]),
                node("Identity", ["cond_in"], ["keep_going"]),
            ],
            [typed("s_in", T.FLOAT, [])],
            [
                typed("keep_going", T.BOOL, []),
                typed("s_out", T.FLOAT, []),
                typed("s_scan", T.FLOAT, []),
            ],
        )
        nodes.append(node("Loop", ["M", "", "s0"], [f"final{index}", f"all{index}"], body=body))
        outputs += [typed(f"final{index}", T.FLOAT, []), typed(f"all{index}", T.FLOAT, [None])]
    nodes.insert(
        0, node("Constant", [], ["one"], value=onnx.helper.make_tensor("", T.FLOAT, [], [1]))
    )
    main = graph(nodes, [typed("M", T.INT64, []), typed("s0", T.FLOAT, [])], outputs)
    return model(main)
