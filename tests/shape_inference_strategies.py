"""Hypothesis strategies for the differential tests of ov_loops' shape inference: small
declared types (dims a number, a symbol or unknown; shapes of rank 0-3 or unknown) and
one-node models of them."""

from __future__ import annotations

import onnx
from hypothesis import strategies as st

from tests.onnx_builders import graph, model, node, untyped

T = onnx.TensorProto
DIMS = st.one_of(st.integers(1, 3), st.sampled_from(["a", "b"]), st.none())
SHAPES = st.one_of(st.none(), st.lists(DIMS, max_size=3))
ELEM_TYPES = st.sampled_from([T.FLOAT, T.DOUBLE, T.INT64])


def value(name: str, elem_type: int, shape) -> onnx.ValueInfoProto:
    """A tensor value; shape None: unknown rank."""
    return onnx.helper.make_tensor_value_info(name, elem_type, shape)


def one_node(op: str, inputs: list, outputs: int = 1, opset: int = 17, **attrs):
    """A model of one `op` node reading typed `inputs` (ValueInfoProtos), its outputs
    undeclared."""
    names = [f"o{index}" for index in range(outputs)]
    made = node(op, [value.name for value in inputs], names, **attrs)
    return model(graph([made], inputs, [untyped(name) for name in names]), opset)
