"""ONNX types: tensor types, element-type mapping to and from OpenVINO, and the types shape
inference knows."""

from __future__ import annotations

import openvino as ov

from ov_loops.frontends.onnx.proto import extension, schema
from ov_loops.frontends.onnx.proto.scopes import all_graphs
from ov_loops.record import Record

T = schema.TensorProto

# Every ONNX element type OpenVINO has a type for; the others (complex, the FNUZ float8s,
# 2-bit integers, float6) have none, and OpenVINO's frontend refuses them.
_ONNX_TO_OV = {
    T.FLOAT: ov.Type.f32,
    T.DOUBLE: ov.Type.f64,
    T.FLOAT16: ov.Type.f16,
    T.BFLOAT16: ov.Type.bf16,
    T.FLOAT8E4M3FN: ov.Type.f8e4m3,
    T.FLOAT8E5M2: ov.Type.f8e5m2,
    T.FLOAT8E8M0: ov.Type.f8e8m0,
    T.FLOAT4E2M1: ov.Type.f4e2m1,
    T.INT8: ov.Type.i8,
    T.INT16: ov.Type.i16,
    T.INT32: ov.Type.i32,
    T.INT64: ov.Type.i64,
    T.UINT8: ov.Type.u8,
    T.UINT16: ov.Type.u16,
    T.UINT32: ov.Type.u32,
    T.UINT64: ov.Type.u64,
    T.INT4: ov.Type.i4,
    T.UINT4: ov.Type.u4,
    T.BOOL: ov.Type.boolean,
    T.STRING: ov.Type.string,
}
_OV_TO_ONNX = {element.get_type_name(): elem_type for elem_type, element in _ONNX_TO_OV.items()}


class TensorType(Record):
    """An ONNX tensor type: elem_type 0 is unknown, `shape` None unknown rank, None dims dynamic."""

    __slots__ = ("elem_type", "shape")

    def __init__(self, elem_type: int, shape: tuple[int | None, ...] | None) -> None:
        self.elem_type = elem_type
        self.shape = shape

    def without_axis(self, axis: int) -> TensorType:
        """The type of one part of this tensor along `axis` (which is removed)."""
        if self.shape is None:
            return self
        return TensorType(self.elem_type, self.shape[:axis] + self.shape[axis + 1 :])

    def value_info(self, name: str) -> schema.ValueInfoProto:
        info = schema.ValueInfoProto(name=name)
        tensor = info.type.tensor_type
        tensor.elem_type = self.elem_type
        if self.shape is not None:
            tensor.shape.SetInParent()
            for length in self.shape:
                dim = tensor.shape.dim.add()
                if length is not None:
                    dim.dim_value = length
        return info


def onnx_elem_type(element: ov.Type) -> int:
    """The ONNX TensorProto element type of an OpenVINO element type (0 when unknown)."""
    if element.is_dynamic():
        return 0
    return _OV_TO_ONNX.get(element.get_type_name(), 0)


def ov_element_type(elem_type: int) -> ov.Type | None:
    """The OpenVINO element type of an ONNX one: dynamic when not given (0), None when OpenVINO
    has no such type."""
    if not elem_type:
        return ov.Type.dynamic
    return _ONNX_TO_OV.get(elem_type)


def known_types(model: schema.ModelProto) -> dict[str, schema.TypeProto]:
    """Types of the values of the main graph and all subgraphs, after shape inference.

    Shape inference is best effort: a model it cannot handle still converts, with what the
    model itself declares.
    """
    try:
        inferred = extension.infer_shapes(model)
    except Exception:  # inference is advisory here; conversion reports real problems
        inferred = model
    types: dict[str, schema.TypeProto] = {}
    _collect(inferred.graph, types)
    return types


# Ops of the default domain whose outputs may be other than tensors.
_NON_TENSOR_OPS = ("Sequence", "Optional", "SplitToSequence")


def only_tensors(model: schema.ModelProto) -> bool:
    """Whether every value of `model` is a tensor or of no declared type, without shape
    inference: no graph declares another type or holds a sparse initializer, and every node is
    an op of the default domain that makes tensors of tensors (not a sequence or optional op,
    not a Constant of a sparse value). Then `known_types` knows nothing but tensors."""
    for graph, _ in all_graphs(model.graph, "main"):
        if graph.sparse_initializer:
            return False
        for value in (*graph.input, *graph.value_info, *graph.output):
            if value.type.WhichOneof("value") not in (None, "tensor_type"):
                return False
        for node in graph.node:
            if node.domain not in ("", "ai.onnx") or node.op_type.startswith(_NON_TENSOR_OPS):
                return False
            if node.op_type == "Constant" and any(
                attr.name == "sparse_value" for attr in node.attribute
            ):
                return False
    return True


def _collect(graph: schema.GraphProto, types: dict[str, schema.TypeProto]) -> None:
    for value in (*graph.input, *graph.value_info, *graph.output):
        if value.type.WhichOneof("value"):
            types.setdefault(value.name, value.type)
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == schema.AttributeProto.GRAPH:
                _collect(attr.g, types)
            for sub in attr.graphs:
                _collect(sub, types)
