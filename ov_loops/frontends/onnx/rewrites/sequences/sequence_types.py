"""ONNX types of sequence and optional values and the tensor parts they become (the record of
which parts the rewrite made is `proto/sequence_parts.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ov_loops.contract.kinds import (
    OPTIONAL,
    OPTIONAL_SEQUENCE,
    SEQUENCE,
    TENSOR,
    CarriedKind,
)
from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.scopes import all_graphs, fresh_name

if TYPE_CHECKING:  # a model without general sequences never imports sequence_ops.py
    from ov_loops.frontends.onnx.rewrites.sequences.sequence_ops import Sequence

T = schema.TensorProto


def kind_of(value_type: schema.TypeProto) -> CarriedKind | str | None:
    """TENSOR, SEQUENCE, OPTIONAL (of a tensor), OPTIONAL_SEQUENCE, None when not declared, or a
    description of what has no tensor form (a map, a sequence of sequences, ...)."""
    which = value_type.WhichOneof("value")
    if which in (None, "tensor_type"):
        return TENSOR if which else None
    if which == "sequence_type":
        inner = kind_of(value_type.sequence_type.elem_type)
        return SEQUENCE if inner in (TENSOR, None) else f"sequence of {inner}s"
    if which == "optional_type":
        inner = kind_of(value_type.optional_type.elem_type)
        if inner in (TENSOR, SEQUENCE, None):
            return OPTIONAL_SEQUENCE if inner == SEQUENCE else OPTIONAL
        return f"optional of a {inner}"
    return which.replace("_type", "")


def element_type(value_type: schema.TypeProto) -> schema.TypeProto:
    """The tensor type of the elements of a sequence/optional type (itself for a tensor)."""
    which = value_type.WhichOneof("value")
    if which == "sequence_type":
        return element_type(value_type.sequence_type.elem_type)
    if which == "optional_type":
        return element_type(value_type.optional_type.elem_type)
    return value_type


def declared_rank(value_type: schema.TypeProto) -> int | None:
    tensor = element_type(value_type).tensor_type
    return len(tensor.shape.dim) if tensor.HasField("shape") else None


def part_names(name: str, kind: CarriedKind, taken: set[str]) -> tuple[str, ...]:
    """Names of the tensors a sequence value `name` becomes: itself for the buffer, then the
    kind's other parts (`name.sizes`, ...; contract/kinds.py), each made unique. An empty name
    (an omitted output) stays empty."""
    if not name:
        return ("",) * kind.ports
    return (name,) + tuple(fresh_name(part, taken) for part in kind.part_names(name)[1:])


def part_infos(value: Sequence) -> list[schema.ValueInfoProto]:
    """Typed value infos of a sequence's parts: 1-D buffer, 1-D int64 sizes, ranks and shapes,
    a bool scalar `present`."""
    types = [value.elem_type, T.INT64, T.INT64, T.INT64, T.BOOL]
    return [
        helpers.make_tensor_value_info(name, elem_type, [] if index == 4 else [None])
        for index, (name, elem_type) in enumerate(zip(value.names(), types))
    ]


def has_sequences(model: schema.ModelProto) -> bool:
    """Whether any graph of the model declares, or any node makes, a non-tensor value."""
    for graph, _ in all_graphs(model.graph, "main"):
        infos = [*graph.input, *graph.output, *graph.value_info]
        if any(kind_of(info.type) not in (TENSOR, None) for info in infos):
            return True
        if any(node.op_type.startswith(("Sequence", "Optional")) or node.op_type in (
            "ConcatFromSequence", "SplitToSequence") for node in graph.node):  # fmt: skip
            return True
    return False
