"""proto/inference/shaping.py: differential tests against onnx's inference on Unsqueeze,
Slice and ConstantOfShape with constant (initializer) or computed inputs, data_prop off and
on."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.onnx_builders import graph, model, node, untyped
from tests.shape_inference_compare import compared
from tests.shape_inference_strategies import SHAPES, T, value

INTS = st.lists(st.integers(-5, 5), min_size=1, max_size=3)


def _model(op: str, data, inputs: list, **attrs) -> onnx.ModelProto:
    """`op` of data (a declared value or None) and inputs: each a list of ints (an int64
    initializer), a shape (a declared int64 value: not constant) or "" (not given)."""
    names, declared, constants = [], [] if data is None else [data], []
    for index, spec in enumerate(inputs):
        name = "" if spec == "" else f"in{index}"
        names.append(name)
        if isinstance(spec, tuple):  # a shape: a value not constant
            declared.append(value(name, T.INT64, list(spec)))
        elif spec != "":
            constants.append(onnx.numpy_helper.from_array(np.array(spec, np.int64), name))
    heads = [] if data is None else [data.name]
    made = node(op, heads + names, ["y"], **attrs)
    return model(graph([made], declared, [untyped("y")], constants))


def _input(ints):
    return st.one_of(st.just(""), ints, st.tuples(st.integers(1, 3)), st.just((None,)))


@settings(max_examples=150, deadline=None)
@given(SHAPES, st.one_of(INTS, st.tuples(st.integers(1, 2))), st.booleans())
def test_unsqueeze_answers_as_onnx(shape, axes, data_prop):
    made = _model("Unsqueeze", value("x", T.FLOAT, shape), [axes])
    assert not compared(made, data_prop)


@settings(max_examples=250, deadline=None)
@given(SHAPES, _input(INTS), _input(INTS), _input(INTS), _input(INTS), st.booleans())
def test_slice_answers_as_onnx(shape, starts, ends, axes, steps, data_prop):
    inputs = [starts or [0], ends or [1], axes, steps]
    while inputs[-1] == "":
        inputs.pop()
    assert not compared(_model("Slice", value("x", T.FLOAT, shape), inputs), data_prop)


@settings(max_examples=80, deadline=None)
@given(
    st.one_of(st.lists(st.integers(0, 3), max_size=3), st.tuples(st.integers(0, 3))),
    st.sampled_from([None, T.FLOAT, T.INT64]),
    st.booleans(),
)
def test_constant_of_shape_answers_as_onnx(shape, elem_type, data_prop):
    attrs = {}
    if elem_type is not None:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
        attrs["value"] = onnx.numpy_helper.from_array(np.ones([1], dtype))
    made = _model("ConstantOfShape", None, [shape], **attrs)
    found = compared(made, data_prop)
    assert not found
    assert found is not None or data_prop
