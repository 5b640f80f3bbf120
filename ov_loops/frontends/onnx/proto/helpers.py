"""The few builders and readers of ONNX messages the conversion uses, on the message classes of
proto/schema.py alone: `onnx.helper` and `onnx.numpy_helper` import the whole onnx package (its
C++ extension; proto/schema.py says why that is avoided). Each makes the message onnx's
function of the same name makes, for the values the conversion passes; a tensor of another
element type than NumPy's own ones is left to onnx's functions (imported then)."""

from __future__ import annotations

import numbers
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ov_loops.frontends.onnx.proto.schema import (
    AttributeProto,
    GraphProto,
    NodeProto,
    OperatorSetIdProto,
    TensorProto,
    TypeProto,
    ValueInfoProto,
)

A, T = AttributeProto, TensorProto

# Element types NumPy has natively, and the TensorProto field their values go in when not raw.
_NUMPY = {
    T.FLOAT: (np.float32, "float_data"),
    T.DOUBLE: (np.float64, "double_data"),
    T.FLOAT16: (np.float16, "int32_data"),
    T.INT8: (np.int8, "int32_data"),
    T.INT16: (np.int16, "int32_data"),
    T.INT32: (np.int32, "int32_data"),
    T.INT64: (np.int64, "int64_data"),
    T.UINT8: (np.uint8, "int32_data"),
    T.UINT16: (np.uint16, "int32_data"),
    T.UINT32: (np.uint32, "uint64_data"),
    T.UINT64: (np.uint64, "uint64_data"),
    T.BOOL: (np.bool_, "int32_data"),
    T.COMPLEX64: (np.complex64, "float_data"),
    T.COMPLEX128: (np.complex128, "double_data"),
}
_ELEM_TYPE = {np.dtype(dtype): elem_type for elem_type, (dtype, _) in _NUMPY.items()}
_LITTLE = sys.byteorder == "little"

# (Python type of every item, the attribute type of a list of them, its field), the first
# that fits; and the field of each attribute type.
_LISTS = (
    (numbers.Integral, A.INTS, "ints"),
    (numbers.Real, A.FLOATS, "floats"),
    ((str, bytes), A.STRINGS, "strings"),
    (TensorProto, A.TENSORS, "tensors"),
    (GraphProto, A.GRAPHS, "graphs"),
    (TypeProto, A.TYPE_PROTOS, "type_protos"),
)
_FIELDS = {
    A.FLOAT: "f",
    A.INT: "i",
    A.STRING: "s",
    A.TENSOR: "t",
    A.SPARSE_TENSOR: "sparse_tensor",
    A.GRAPH: "g",
    A.TYPE_PROTO: "tp",
    A.SPARSE_TENSORS: "sparse_tensors",
    **{attr_type: field for _, attr_type, field in _LISTS},
}
_LIST_TYPES = {A.SPARSE_TENSORS, *(attr_type for _, attr_type, _ in _LISTS)}


def make_node(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: str | None = None,
    domain: str | None = None,
    **attributes: Any,
) -> NodeProto:
    """A node; its attributes in the order of their names, those given None left out."""
    node = NodeProto(op_type=op_type, input=inputs, output=outputs)
    if name:
        node.name = name
    if domain is not None:
        node.domain = domain
    node.attribute.extend(
        make_attribute(key, value) for key, value in sorted(attributes.items()) if value is not None
    )
    return node


def make_attribute(key: str, value: Any) -> AttributeProto:
    """An attribute whose type follows the Python type of `value` (as onnx.helper's)."""
    attr = AttributeProto(name=key)
    if isinstance(value, numbers.Integral):
        attr.i, attr.type = int(value), A.INT
    elif isinstance(value, numbers.Real):
        attr.f, attr.type = float(value), A.FLOAT
    elif isinstance(value, (str, bytes)):
        attr.s, attr.type = _bytes(value), A.STRING
    elif isinstance(value, TensorProto):
        attr.t.CopyFrom(value)
        attr.type = A.TENSOR
    elif isinstance(value, GraphProto):
        attr.g.CopyFrom(value)
        attr.type = A.GRAPH
    elif isinstance(value, TypeProto):
        attr.tp.CopyFrom(value)
        attr.type = A.TYPE_PROTO
    elif isinstance(value, Iterable) and (items := list(value)):
        kinds = {type(item) for item in items}
        _, attr.type, field = next(
            entry for entry in _LISTS if all(issubclass(kind, entry[0]) for kind in kinds)
        )
        getattr(attr, field).extend(map(_bytes, items) if field == "strings" else items)
    else:
        raise TypeError(f"attribute '{key}': cannot make an ONNX attribute of {value!r}")
    return attr


def _bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


def get_attribute_value(attr: AttributeProto) -> Any:
    """The value of `attr` by its declared type (a list for the list types, None undefined)."""
    if attr.ref_attr_name:
        raise ValueError(f"attribute '{attr.name}' refers to '{attr.ref_attr_name}'")
    field = _FIELDS.get(attr.type)
    if field is None:
        return None
    value = getattr(attr, field)
    return list(value) if attr.type in _LIST_TYPES else value


def make_opsetid(domain: str, version: int) -> OperatorSetIdProto:
    return OperatorSetIdProto(domain=domain, version=version)


def make_tensor_value_info(
    name: str, elem_type: int, shape: Sequence[int | str | None] | None
) -> ValueInfoProto:
    """A tensor's value info; a dim None is unknown, a str a named dim; no shape without one."""
    info = ValueInfoProto(name=name)
    tensor = info.type.tensor_type
    tensor.elem_type = elem_type
    if shape is not None:
        tensor.shape.SetInParent()
        for length in shape:
            dim = tensor.shape.dim.add()
            if isinstance(length, numbers.Integral):
                dim.dim_value = int(length)
            elif isinstance(length, str):
                dim.dim_param = length
    return info


def make_tensor(name: str, elem_type: int, dims: Sequence[int], values: Sequence) -> TensorProto:
    """A tensor of `values` in the typed field of `elem_type` (not raw), as onnx.helper's."""
    if elem_type not in _NUMPY or elem_type == T.FLOAT16 and any(values):
        import onnx.helper  # float16 as bits, and the types NumPy has not: onnx's own

        return onnx.helper.make_tensor(name, elem_type, dims, values)
    tensor = TensorProto(name=name, data_type=elem_type, dims=dims)
    getattr(tensor, _NUMPY[elem_type][1]).extend(values)
    return tensor


def tensor_dtype_to_np_dtype(elem_type: int) -> np.dtype:
    """The NumPy dtype of an ONNX element type (onnx's for those NumPy has not)."""
    if elem_type in _NUMPY:
        return np.dtype(_NUMPY[elem_type][0])
    import onnx.helper

    return onnx.helper.tensor_dtype_to_np_dtype(elem_type)


def tensor_dtype_to_string(elem_type: int) -> str:
    """'TensorProto.FLOAT' for FLOAT, as onnx.helper's."""
    return f"TensorProto.{T.DataType.Name(elem_type)}"


def from_array(array: np.ndarray, name: str | None = None) -> TensorProto:
    """A tensor of `array`'s values in raw bytes (little-endian: NumPy's order on the machines
    OpenVINO runs on; onnx's function takes any other)."""
    array = np.asarray(array)
    elem_type = _ELEM_TYPE.get(array.dtype) if array.dtype.isnative and _LITTLE else None
    if elem_type is None:
        import onnx.numpy_helper

        return onnx.numpy_helper.from_array(array, name)
    tensor = TensorProto(data_type=elem_type, dims=array.shape)
    if name:
        tensor.name = name
    tensor.raw_data = array.tobytes()
    return tensor


def to_array(tensor: TensorProto) -> np.ndarray:
    """The values of a tensor held in the model (not in a file) of a NumPy element type."""
    if tensor.data_type not in _NUMPY or tensor.data_location == T.EXTERNAL or not _LITTLE:
        import onnx.numpy_helper

        return onnx.numpy_helper.to_array(tensor)
    dtype, field = _NUMPY[tensor.data_type]
    if tensor.HasField("raw_data"):
        flat = np.frombuffer(tensor.raw_data, dtype)
    elif tensor.data_type == T.FLOAT16:
        flat = np.asarray(tensor.int32_data, np.uint16).view(np.float16)
    elif tensor.data_type in (T.COMPLEX64, T.COMPLEX128):
        flat = np.asarray(getattr(tensor, field), dtype().real.dtype).view(dtype)
    else:
        flat = np.asarray(getattr(tensor, field), dtype)
    return flat.astype(dtype, copy=False).reshape(tuple(tensor.dims))
