"""The types ov_loops' own shape inference reasons about, and onnx's rules to combine them.

A type is a Tensor (element type, shape or None when the rank is unknown) or a Sequence of
tensors (its element Tensor or None); a dim is an int, a symbol (str) or None (unknown). Each
function states the onnx shape-inference rule it follows (onnx/defs/shape_inference.cc,
onnx/shape_inference/implementation.cc: mergeShapesAndTypes, checkShapesAndTypes,
UnionShapeInfo, MaterializeSymbolicShape). Where onnx would fail, `Unsure` is raised and the
caller falls back to onnx's own inference.
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import schema
from ov_loops.record import Record

Dim = int | str | None
Shape = tuple[Dim, ...] | None


class Unsure(Exception):
    """Raised where ov_loops' inference might not give onnx's answer: fall back to onnx's."""


class Tensor(Record):
    """A tensor type: ONNX element type (0 unknown) and shape (None: unknown rank)."""

    __slots__ = ("elem", "shape")

    def __init__(self, elem: int, shape: Shape = None) -> None:
        self.elem, self.shape = elem, shape


class Sequence(Record):
    """A sequence of tensors; `elem` None when the element type is unknown."""

    __slots__ = ("elem",)

    def __init__(self, elem: Tensor | None) -> None:
        self.elem = elem


Type = Tensor | Sequence


def parse_type(proto: schema.TypeProto) -> Type | None:
    """The type a TypeProto declares; None when it declares none; Unsure for other kinds."""
    kind = proto.WhichOneof("value")
    if kind is None:
        return None
    if kind == "tensor_type":
        return _parse_tensor(proto.tensor_type)
    if kind == "sequence_type":
        elem = proto.sequence_type.elem_type
        if not proto.sequence_type.HasField("elem_type") or elem.WhichOneof("value") is None:
            return Sequence(None)
        if elem.WhichOneof("value") != "tensor_type":
            raise Unsure("a sequence of non-tensors")
        return Sequence(_parse_tensor(elem.tensor_type))
    raise Unsure(f"a {kind}")


def _parse_tensor(proto: schema.TypeProto.Tensor) -> Tensor:
    if not proto.HasField("shape"):
        return Tensor(proto.elem_type)
    dims: list[Dim] = []
    for dim in proto.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(dim.dim_value)
        else:
            dims.append(dim.dim_param or None)
    return Tensor(proto.elem_type, tuple(dims))


def write_type(value: Type, proto: schema.TypeProto) -> None:
    """Write `value` into an empty TypeProto."""
    if isinstance(value, Sequence):
        proto.sequence_type.SetInParent()
        if value.elem is not None:
            write_type(value.elem, proto.sequence_type.elem_type)
        return
    proto.tensor_type.elem_type = value.elem
    if value.shape is None:
        return
    shape = proto.tensor_type.shape
    shape.SetInParent()
    for dim in value.shape:
        made = shape.dim.add()
        if isinstance(dim, int):
            made.dim_value = dim
        elif dim is not None:
            made.dim_param = dim


def merge(inferred: Type, existing: Type | None) -> Type:
    """onnx's checkShapesAndTypes then mergeShapesAndTypes: `existing` refined by `inferred`
    (an unknown elem type or dim takes the inferred one; an inferred dim value wins)."""
    if existing is None:
        return inferred
    if type(inferred) is not type(existing):
        raise Unsure("a type conflicts with the declared one")
    if isinstance(inferred, Sequence):
        if inferred.elem is None:
            return existing
        return Sequence(merge(inferred.elem, existing.elem))
    if inferred.elem and existing.elem and inferred.elem != existing.elem:
        raise Unsure("an element type conflicts with the declared one")
    elem = existing.elem or inferred.elem
    if inferred.shape is None:
        return Tensor(elem, existing.shape)
    if existing.shape is None:
        return Tensor(elem, inferred.shape)
    if len(inferred.shape) != len(existing.shape):
        raise Unsure("a rank conflicts with the declared one")
    dims = []
    for new, old in zip(inferred.shape, existing.shape):
        if isinstance(new, int) and isinstance(old, int) and new != old:
            raise Unsure("a dim conflicts with the declared one")
        dims.append(new if old is None or isinstance(new, int) else old)
    return Tensor(elem, tuple(dims))


def union_shape(source: Shape, target: Shape) -> Shape:
    """onnx's UnionShapeInfo: the dims `source` and `target` share; a differing rank gives
    an unknown rank."""
    if target is None:
        return None
    if source is None or len(source) != len(target):
        return None
    return tuple(t if s == t and s is not None else None for s, t in zip(source, target))


class Symbols:
    """onnx's SymbolTable: fresh `unk__N` names for unknown dims, none already in the model."""

    def __init__(self, model: schema.ModelProto, graphs: list[schema.GraphProto]) -> None:
        self._used = set()
        for graph in graphs:
            for value in [*graph.input, *graph.output, *graph.value_info]:
                _add_symbols(value.type, self._used)
        self._next = 0

    def fresh(self) -> str:
        """A new symbol."""
        while True:
            name = f"unk__{self._next}"
            self._next += 1
            if name not in self._used:
                self._used.add(name)
                return name

    def materialize(self, value: Type) -> Type:
        """onnx's MaterializeSymbolicShape: every unknown dim becomes a fresh symbol."""
        if isinstance(value, Sequence):
            return value if value.elem is None else Sequence(self.materialize(value.elem))
        if value.shape is None or None not in value.shape:
            return value
        dims = tuple(self.fresh() if dim is None else dim for dim in value.shape)
        return Tensor(value.elem, dims)


def _add_symbols(proto: schema.TypeProto, used: set[str]) -> None:
    kind = proto.WhichOneof("value")
    if kind == "tensor_type":
        used.update(dim.dim_param for dim in proto.tensor_type.shape.dim if dim.dim_param)
    elif kind == "sequence_type":
        _add_symbols(proto.sequence_type.elem_type, used)
