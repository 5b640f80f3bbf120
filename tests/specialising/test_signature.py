"""The signature of a call (the cache key of `ov_loops.compile`), device-free: names, shapes,
element types, and the one-line errors of inputs the model refuses."""

from __future__ import annotations

import re

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper

from ov_loops.errors import InputError
from ov_loops.specialising.signature import (
    Signature,
    Slot,
    arranged,
    onnx_slots,
    signature_of,
)

SLOTS = [Slot(("x",), (None, None, 4), ov.Type.f32), Slot(("h0",), (None, 8), None)]
X = np.zeros((2, 5, 4), np.float32)
H = np.zeros((2, 8), np.float32)


def test_onnx_slots_read_dims_types_and_symbols_and_skip_initializers() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", None, 4])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["y"])],
        "g",
        [x, w],
        [y],
        [helper.make_tensor("w", TensorProto.FLOAT, [4], [1.0] * 4)],
    )
    (slot,) = onnx_slots(helper.make_model(graph))
    assert slot == Slot(("x",), (None, None, 4), ov.Type.f32)
    assert slot.declared() == "[?,?,4]{f32}"


def test_the_signature_has_names_shapes_and_the_declared_element_type() -> None:
    signature = signature_of(SLOTS, [X, H])
    assert signature == Signature((("x", (2, 5, 4), ov.Type.f32), ("h0", (2, 8), ov.Type.f32)))
    assert str(signature) == "x[2,5,4]{f32},h0[2,8]{f32}"
    assert signature.input_shapes() == {"x": ([2, 5, 4], ov.Type.f32), "h0": ([2, 8], ov.Type.f32)}


def test_a_value_of_another_type_shares_a_typed_inputs_signature() -> None:
    # converted at the call (as CompiledModel does): one compiled model serves both
    assert signature_of(SLOTS, [X.astype(np.float64), H]) == signature_of(SLOTS, [X, H])


def test_an_untyped_input_takes_the_values_type_into_the_key() -> None:
    f32 = signature_of(SLOTS, [X, H])
    f64 = signature_of(SLOTS, [X, H.astype(np.float64)])
    assert f32 != f64
    assert f64.inputs[1] == ("h0", (2, 8), ov.Type.f64)


def test_shapes_make_different_signatures() -> None:
    assert signature_of(SLOTS, [X, H]) != signature_of(SLOTS, [np.zeros((2, 6, 4)), H])


def test_inputs_arrive_by_name_by_position_or_as_a_list() -> None:
    for inputs in ({"x": X, "h0": H}, {0: X, 1: H}, {"h0": H, 0: X}, [X, H], (X, H)):
        got = arranged(SLOTS, inputs)
        assert [value.shape for value in got] == [(2, 5, 4), (2, 8)]
    assert arranged(SLOTS[:1], X)[0].shape == (2, 5, 4)  # one array for one input


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"x": X, "y": H}, "no input 'y': the model's inputs are x, h0"),
        ({"x": X}, "no value for input 'h0'"),
        ({"x": X, 0: X, "h0": H}, "input 'x' is given twice"),
        ([X], "1 input value(s) for 2 input(s) (x, h0)"),
    ],
)
def test_names_and_counts_the_model_lacks_are_input_errors(inputs, message: str) -> None:
    with pytest.raises(InputError) as raised:
        arranged(SLOTS, inputs)
    assert str(raised.value) == message and raised.value.exit_code == 2


@pytest.mark.parametrize(
    ("x", "message"),
    [
        (np.zeros((5, 4)), "input 'x': shape [5, 4] has rank 2, the model takes [?,?,4]{f32} "),
        (np.zeros((2, 5, 3)), "input 'x': dim 2 is 3 in [2, 5, 3], the model takes 4 "),
        (np.zeros((2, 5, 4), np.complex64), "input 'x': numpy type complex64 has no OpenVINO"),
    ],
)
def test_values_the_model_refuses_are_input_errors(x: np.ndarray, message: str) -> None:
    with pytest.raises(InputError, match="^" + re.escape(message)):
        signature_of(SLOTS, [x, H])


def test_onnx_slots_of_an_untyped_input_have_no_element_type() -> None:
    x = helper.make_value_info("x", onnx.TypeProto())
    x.type.tensor_type.shape.dim.add().dim_param = "N"
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [x])
    graph.output[0].name = "y"
    (slot,) = onnx_slots(helper.make_model(graph))
    assert slot.element is None and slot.dims == (None,)
