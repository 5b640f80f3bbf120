"""ONNX types: element-type mapping to and from OpenVINO, and the types shape inference knows."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov

_SPECIAL = {
    "bf16": onnx.TensorProto.BFLOAT16,
    "f8e4m3": onnx.TensorProto.FLOAT8E4M3FN,
    "f8e5m2": onnx.TensorProto.FLOAT8E5M2,
    "string": onnx.TensorProto.STRING,
    "u4": onnx.TensorProto.UINT4,
    "i4": onnx.TensorProto.INT4,
}


def onnx_elem_type(element: ov.Type) -> int:
    """The ONNX TensorProto element type of an OpenVINO element type (0 when unknown)."""
    if element.is_dynamic():
        return 0
    name = element.get_type_name()
    if name in _SPECIAL:
        return _SPECIAL[name]
    try:
        return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(element.to_dtype()))
    except (KeyError, TypeError, RuntimeError):
        return 0


def ov_element_type(elem_type: int) -> ov.Type:
    """The OpenVINO element type of an ONNX one (dynamic when unknown)."""
    for name, onnx_type in _SPECIAL.items():
        if onnx_type == elem_type:
            return ov.Type(name)
    if not elem_type:
        return ov.Type.dynamic
    return ov.Type(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem_type)))


def known_types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """Types of the values of the main graph and all subgraphs, after shape inference.

    Shape inference is best effort: a model it cannot handle still converts, with what the
    model itself declares.
    """
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # inference is advisory here; conversion reports real problems
        inferred = model
    types: dict[str, onnx.TypeProto] = {}
    _collect(inferred.graph, types)
    return types


def _collect(graph: onnx.GraphProto, types: dict[str, onnx.TypeProto]) -> None:
    for value in (*graph.input, *graph.value_info, *graph.output):
        if value.type.WhichOneof("value"):
            types.setdefault(value.name, value.type)
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _collect(attr.g, types)
            for sub in attr.graphs:
                _collect(sub, types)
