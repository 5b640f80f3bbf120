"""proto/helpers.py makes the messages onnx.helper and onnx.numpy_helper make."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from ov_loops.frontends.onnx.proto import helpers

T = onnx.TensorProto
BODY = helper.make_graph([], "body", [], [])
ATTRIBUTES = {
    "int": 3,
    "numpy int": np.int64(-2),
    "float": 0.5,
    "string": "linear",
    "bytes": b"\x01",
    "tensor": numpy_helper.from_array(np.arange(3, dtype=np.int64)),
    "graph": BODY,
    "ints": [1, -1],
    "floats": [0.5, 2],
    "strings": ["a", b"b"],
    "tensors": [numpy_helper.from_array(np.ones(2, np.float32))],
    "graphs": [BODY, BODY],
}


@pytest.mark.parametrize("kind", ATTRIBUTES)
def test_make_node_as_onnx(kind):
    value = ATTRIBUTES[kind]
    mine = helpers.make_node("Op", ["a", ""], ["b"], name="n", domain="d", z=1, value=value)
    theirs = helper.make_node("Op", ["a", ""], ["b"], name="n", domain="d", z=1, value=value)
    assert mine.SerializeToString() == theirs.SerializeToString()
    attr = next(a for a in mine.attribute if a.name == "value")
    got, want = helpers.get_attribute_value(attr), helper.get_attribute_value(attr)
    assert got == want


def test_none_attributes_are_left_out_and_names_sorted():
    mine = helpers.make_node("Op", [], ["b"], b=1, a=None, c=[2])
    assert [attr.name for attr in mine.attribute] == ["b", "c"]


@pytest.mark.parametrize("shape", [None, [], [2, None, "n"]])
def test_make_tensor_value_info_as_onnx(shape):
    mine = helpers.make_tensor_value_info("x", T.INT64, shape)
    assert mine == helper.make_tensor_value_info("x", T.INT64, shape)


@pytest.mark.parametrize("elem_type", [T.FLOAT, T.INT64, T.BOOL, T.UINT32, T.FLOAT16, T.BFLOAT16])
@pytest.mark.parametrize("dims, values", [([0], []), ([1], [0]), ([2], [1, 0])])
def test_make_tensor_as_onnx(elem_type, dims, values):
    mine = helpers.make_tensor("v", elem_type, dims, values)
    assert mine == helper.make_tensor("v", elem_type, dims, values)


ARRAYS = [
    np.arange(6, dtype=np.int64).reshape(2, 3),
    np.array(1.5, np.float32),
    np.array([True, False]),
    np.array([0.5, -2], np.float16),
    np.array([1 + 2j], np.complex64),
    np.array([255], np.uint8),
]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: a.dtype.str)
def test_from_array_and_to_array_as_onnx(array):
    mine = helpers.from_array(array, "t")
    assert mine == numpy_helper.from_array(array, "t")
    back = helpers.to_array(mine)
    assert back.dtype == numpy_helper.to_array(mine).dtype
    np.testing.assert_array_equal(back, array)


@pytest.mark.parametrize("elem_type", [T.FLOAT16, T.BOOL, T.INT8, T.UINT64, T.DOUBLE])
def test_to_array_reads_typed_fields_as_onnx(elem_type):
    tensor = helper.make_tensor("t", elem_type, [2], [1, 0])
    np.testing.assert_array_equal(helpers.to_array(tensor), numpy_helper.to_array(tensor))
    assert helpers.to_array(tensor).dtype == numpy_helper.to_array(tensor).dtype


@pytest.mark.parametrize("elem_type", [T.FLOAT, T.FLOAT16, T.BOOL, T.UINT32, T.STRING, T.INT4])
def test_element_type_names_and_dtypes_as_onnx(elem_type):
    assert helpers.tensor_dtype_to_string(elem_type) == helper.tensor_dtype_to_string(elem_type)
    assert helpers.tensor_dtype_to_np_dtype(elem_type) == helper.tensor_dtype_to_np_dtype(elem_type)
