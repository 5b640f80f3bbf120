"""Each ONNX sequence/optional op rewritten into tensor nodes (kernels in sequence_ops.py and
sequence_concat.py). A handler reads its node's inputs from `scope` (sequence values by name),
writes nodes with `e` and binds its outputs; it returns a reason when it cannot."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.rewrites.sequences import sequence_concat, sequence_ops
from ov_loops.frontends.onnx.rewrites.sequences.sequence_emit import Emit
from ov_loops.frontends.onnx.rewrites.sequences.sequence_ops import (
    EMPTY,
    Sequence,
    join_dims,
    join_ranks,
)
from ov_loops.frontends.onnx.rewrites.sequences.sequence_types import (
    OPTIONAL,
    OPTIONAL_SEQUENCE,
    SEQUENCE,
    element_type,
    kind_of,
    part_names,
)

Scope = dict[str, Sequence]


class TensorInfo(dict):
    """name -> (element type, rank: an int, None when unknown, EMPTY for an element read from a
    sequence that is never filled); `dims`: name -> the dims proven of a tensor, an int (the
    same in every iteration of every run) or None per dim."""

    def __init__(self, ranks=(), dims: dict[str, tuple] | None = None) -> None:
        super().__init__(ranks)
        self.dims = dict(dims or {})

    def copy(self) -> TensorInfo:
        return TensorInfo(self, self.dims)


Handler = Callable[[schema.NodeProto, Scope, Emit, TensorInfo], "str | None"]
HANDLERS: dict[str, Handler] = {}
UNKNOWN_RANK = (
    "the rank of the sequence's elements is not known before run time (the tensors put in it "
    "differ in rank, or neither the model's types nor ONNX shape inference give theirs) and "
    "OpenVINO's CPU plugin needs it"
)


def handles(op_type: str):
    def register(function: Handler) -> Handler:
        HANDLERS[op_type] = function
        return function

    return register


def handles_sequence(op_type: str):
    """Register a handler of an op whose first input is a sequence: it gets the sequence
    (`seq`) too; a first input that is no sequence known here is refused."""

    def register(function):
        def handler(node, scope, e, info):
            found = scope.get(node.input[0]) if node.input and node.input[0] else None
            if found is None:
                return f"input '{node.input[0]}' is not a known sequence"
            return function(node, found, scope, e, info)

        HANDLERS[op_type] = handler
        return function

    return register


def bind(scope: Scope, e: Emit, name: str, value: Sequence) -> None:
    """Make `value` the sequence `name` (its parts named after it, see part_names)."""
    parts = part_names(name, value.kind, e.taken)
    for source, target in zip(value.names(), parts):
        e.op("Identity", [source], out=target)
    scope[name] = value.renamed(parts)


def _attr(node: schema.NodeProto, name: str, default):
    for attr in node.attribute:
        if attr.name == name:
            return helpers.get_attribute_value(attr)
    return default


def _optional_input(node: schema.NodeProto, index: int) -> str | None:
    return node.input[index] if len(node.input) > index and node.input[index] else None


def _rank(info: TensorInfo, name: str) -> int | None:
    return info.get(name, (0, None))[1]


def _known(info: TensorInfo, name: str | None) -> int | None:
    """The rank of `name` when known as one number."""
    rank = _rank(info, name) if name else None
    return rank if isinstance(rank, int) else None


@handles("SequenceEmpty")
def _empty(node, scope, e, info):
    bind(
        scope,
        e,
        node.output[0],
        sequence_ops.empty(e, _attr(node, "dtype", schema.TensorProto.FLOAT)),
    )


@handles("SequenceConstruct")
def _construct(node, scope, e, info):
    rank = EMPTY
    for name in node.input:
        rank = join_ranks(rank, _rank(info, name))
    elem_type = info.get(node.input[0], (0, None))[0]
    bind(scope, e, node.output[0], sequence_ops.construct(e, list(node.input), elem_type, rank))


@handles_sequence("SequenceInsert")
def _insert(node, seq, scope, e, info):
    tensor = node.input[1]
    if not seq.elem_type:
        seq = seq.replace(elem_type=info.get(tensor, (0, None))[0])
    known = (_rank(info, tensor), info.dims.get(tensor))
    made = sequence_ops.insert(e, seq, tensor, _optional_input(node, 2), known)
    bind(scope, e, node.output[0], made)


@handles_sequence("SequenceErase")
def _erase(node, seq, scope, e, info):
    bind(scope, e, node.output[0], sequence_ops.erase(e, seq, _optional_input(node, 1)))


def _tensor_out(node, e: Emit, info: TensorInfo, made: str, elem_type: int, rank) -> None:
    e.op("Identity", [made], out=node.output[0])
    info[node.output[0]] = (elem_type, rank)  # EMPTY: read from a sequence never filled


@handles_sequence("SequenceAt")
def _at(node, seq, scope, e, info):
    if seq.rank is None:
        return UNKNOWN_RANK
    _tensor_out(node, e, info, sequence_ops.at(e, seq, node.input[1]), seq.elem_type, seq.rank)


@handles_sequence("SequenceLength")
def _length(node, seq, scope, e, info):
    _tensor_out(node, e, info, sequence_ops.length(e, seq), schema.TensorProto.INT64, 0)


@handles_sequence("ConcatFromSequence")
def _concat(node, seq, scope, e, info):
    if seq.rank is None:
        return UNKNOWN_RANK
    new_axis = _attr(node, "new_axis", 0)
    made = sequence_concat.concat_from_sequence(e, seq, _attr(node, "axis", None), new_axis)
    rank = seq.rank + new_axis if isinstance(seq.rank, int) else None
    _tensor_out(node, e, info, made, seq.elem_type, rank)


@handles("SplitToSequence")
def _split(node, scope, e, info):
    x, split = node.input[0], _optional_input(node, 1)
    ranks = tuple(_known(info, name) for name in (x, split))
    keepdims, axis = _attr(node, "keepdims", 1), _attr(node, "axis", 0)
    elem_type = info.get(x, (0, None))[0]
    made = sequence_concat.split_to_sequence(e, x, split, axis, keepdims, ranks, elem_type)
    bind(scope, e, node.output[0], made)


@handles("Optional")
def _optional(node, scope, e, info):
    given = _optional_input(node, 0)
    if given is None:
        declared = _attr(node, "type", None)
        if declared is None:
            return "Optional() without an input needs its 'type' attribute"
        elem_type = element_type(declared).tensor_type.elem_type
        made = sequence_ops.empty(e, elem_type)
        if kind_of(declared) == SEQUENCE:
            made = Sequence(*made.names(), elem_type, EMPTY, present=e.const(False, np.bool_))
        else:
            made = Sequence(*made.names(), elem_type, EMPTY, optional=True)
    elif given in scope:
        made = scope[given].as_sequence().replace(present=e.const(True, np.bool_))
    else:
        elem_type, rank = info.get(given, (0, None))
        made = sequence_ops.construct(e, [given], elem_type, rank)
        made = Sequence(*made.names(), elem_type, rank, optional=True)
    bind(scope, e, node.output[0], made)


@handles("OptionalHasElement")
def _has_element(node, scope, e, info):
    given = _optional_input(node, 0)
    value = scope.get(given) if given else None
    if given is None:
        made = e.const(False, np.bool_)
    elif value is None or value.kind == SEQUENCE:  # a tensor or a sequence (opset 18)
        made = e.const(True, np.bool_)
    elif value.kind == OPTIONAL_SEQUENCE:
        made = value.present
    else:
        made = e.op("Greater", [sequence_ops.length(e, value), e.const(0)])
    _tensor_out(node, e, info, made, schema.TensorProto.BOOL, 0)


@handles("OptionalGetElement")
def _get_element(node, scope, e, info):
    value = scope.get(node.input[0])
    if value is None:  # a tensor (opset 18)
        e.op("Identity", [node.input[0]], out=node.output[0])
    elif value.kind == OPTIONAL:
        if value.rank is None:
            return UNKNOWN_RANK
        element = sequence_ops.at(e, value, e.const(0))
        _tensor_out(node, e, info, element, value.elem_type, value.rank)
    else:
        bind(scope, e, node.output[0], value.as_sequence())


@handles("Identity")
def _identity(node, scope, e, info):
    value = scope.get(node.input[0])
    if value is None:
        e.nodes.append(node)
    else:
        bind(scope, e, node.output[0], value)


def widen(first: Sequence | None, second: Sequence | None) -> tuple | None:
    """(kind, rank, element type, dims) of a value that is either of two sequences: an Optional
    of a sequence if either is one; None when either is not a sequence."""
    if first is None or second is None:
        return None
    kinds = {first.kind, second.kind}
    kind = OPTIONAL_SEQUENCE if OPTIONAL_SEQUENCE in kinds else first.kind
    elem_type = first.elem_type or second.elem_type
    return kind, join_ranks(first.rank, second.rank), elem_type, join_dims(first.dims, second.dims)


def as_kind(e: Emit, value: Sequence, kind: str) -> Sequence:
    """`value` as a value of `kind`: a sequence gets a true `present` as an Optional of a
    sequence, an Optional of a sequence holds its sequence as a sequence."""
    if kind == OPTIONAL_SEQUENCE and value.present is None:
        return value.replace(present=e.const(True, np.bool_))
    if kind != OPTIONAL_SEQUENCE:
        return value.as_sequence().replace(optional=kind == OPTIONAL)
    return value


# Ops whose result has the largest rank of their inputs (numpy broadcasting).
BROADCASTING = frozenset(
    [
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Mod",
        "Max",
        "Min",
        "Sum",
        "Mean",
        "And",
        "Or",
        "Xor",
        "Equal",
        "Less",
        "Greater",
        "LessOrEqual",
        "GreaterOrEqual",
        "Where",
        "Identity",
        "Cast",
        "CastLike",
        "Neg",
        "Abs",
        "Exp",
        "Log",
        "Sqrt",
        "Relu",
        "Sigmoid",
        "Tanh",
        "Erf",
        "Floor",
        "Ceil",
        "Round",
        "Sign",
        "Not",
        "Reciprocal",
        "Clip",
        "LeakyRelu",
        "Elu",
        "Selu",
        "Softplus",
        "Gelu",
    ]
)


def propagate_rank(node: schema.NodeProto, info: TensorInfo) -> None:
    """Record the rank of a broadcasting op's output when its inputs' ranks are known and
    shape inference left it open (it does not see through sequences)."""
    if node.op_type not in BROADCASTING or not node.output:
        return
    if _rank(info, node.output[0]) is not None:
        return
    known = [info.get(name) for name in node.input if name]
    if known and all(entry is not None and entry[1] is not None for entry in known):
        ranks = [entry[1] for entry in known if entry[1] != EMPTY]
        info[node.output[0]] = (known[0][0], max(ranks) if ranks else EMPTY)
