"""Graph helpers on OpenVINO values, the ground floor every layer may use: lengths, constants,
empty stacks, reversal, copies the CPU plugin keeps."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops import opfactory
from ov_loops.record import Record


def is_constant(value: ov.Output) -> bool:
    """Whether `value` comes straight from a Constant."""
    return value.get_node().get_type_name() == "Constant"


def constant_value(value: ov.Output) -> np.ndarray | None:
    """The value of `value` when it comes straight from a Constant, else None."""
    return np.asarray(value.get_node().get_data()) if is_constant(value) else None


# Folding stops at these: their values are not known before run time (or not small).
NOT_FOLDED = frozenset(
    {"Parameter", "Loop", "TensorIterator", "If", "ReadValue", "RandomUniform", "Multinomial"}
)
MAX_FOLDED_ELEMENTS = 64
MAX_FOLDED_DEPTH = 24


def folded_value(
    value: ov.Output, given: Mapping[ov.Output, np.ndarray] | None = None
) -> np.ndarray | None:
    """The value of `value` when the graph computes it from Constants, static shapes and the
    values `given` for some outputs (a body's Parameters) alone (a trip count of `Shape(x)[0]`
    once x's shape is static), else None. Only small values (at most MAX_FOLDED_ELEMENTS
    elements, MAX_FOLDED_DEPTH ops deep) are folded::

        Constant c         -> c
        given output v     -> given[v]
        ShapeOf(x)         -> x.shape          when x's shape is static
        op(a, b, ...)      -> op.evaluate(folded a, folded b, ...)   when all fold
    """
    known = {
        (output.get_node().get_instance_id(), output.get_index()): np.asarray(data)
        for output, data in (given or {}).items()
    }
    return _fold(value, MAX_FOLDED_DEPTH, known)


def _fold(value: ov.Output, depth: int, known: dict) -> np.ndarray | None:
    node = value.get_node()
    key = (node.get_instance_id(), value.get_index())
    if key not in known:
        known[key] = _fold_node(value, node, depth, known)
    return known[key]


def _fold_node(value: ov.Output, node: ov.Node, depth: int, known: dict) -> np.ndarray | None:
    if is_constant(value):
        return constant_value(value)
    shape = value.get_partial_shape()
    if depth == 0 or node.get_type_name() in NOT_FOLDED or shape.is_dynamic:
        return None
    if np.prod(lengths(shape), dtype=np.int64) > MAX_FOLDED_ELEMENTS:
        return None
    if node.get_type_name() == "ShapeOf":
        source = node.get_input_partial_shape(0)
        dtype = value.get_element_type().to_dtype()
        return np.array(lengths(source), dtype) if source.is_static else None
    arguments = [_fold(argument, depth - 1, known) for argument in node.input_values()]
    if any(argument is None for argument in arguments):
        return None
    results = [ov.Tensor(out.get_element_type(), out.get_shape()) for out in node.outputs()]
    try:
        evaluated = node.evaluate(results, [ov.Tensor(np.asarray(a)) for a in arguments])
    except RuntimeError:  # an op without an evaluate, or one that refuses these values
        return None
    return np.array(results[value.get_index()].data) if evaluated else None


def upstream(
    values: Iterable[ov.Output | None], through: Callable[[ov.Node], bool] | None = None
) -> Iterator[ov.Node]:
    """Each node `values` (None skipped) are computed from, themselves included, once; the
    walk does not go past a node `through` refuses (it is still given)."""
    seen: set[int] = set()
    pending = [value.get_node() for value in values if value is not None]
    while pending:
        node = pending.pop()
        if node.get_instance_id() in seen:
            continue
        seen.add(node.get_instance_id())
        yield node
        if through is None or through(node):
            pending.extend(value.get_node() for value in node.input_values())


def dimensions(shape: ov.PartialShape | ov.Shape) -> list:
    """The dims of a shape of static rank, read by index: iterating an `ov.PartialShape` or
    `ov.Shape` costs about 25 us a dim (openvino 2026.4.1), indexing 1-2 us."""
    return [shape[index] for index in range(len(shape))]


def lengths(shape: ov.PartialShape, unknown: int | None = None) -> list[int | None]:
    """The lengths of a shape of static rank; `unknown` for a dim that is not static."""
    return [dim.get_length() if dim.is_static else unknown for dim in dimensions(shape)]


def runtime_keys(rt_info) -> list[str]:
    """The keys of a runtime-info map (`Node.get_rt_info()`), read without running its
    iterator to its end: the StopIteration, a C++ exception, costs about 200 us."""
    keys = iter(rt_info)
    return [next(keys) for _ in range(len(rt_info))]


def length(value: ov.Output, axis: int) -> ov.Node:
    """value.shape[axis] as an i64 scalar."""
    index = ops.constant(np.array([axis], np.int64))
    zero = ops.constant(np.array([0], np.int64))
    return ops.squeeze(ops.gather(ops.shape_of(value, ov.Type.i64), index, zero), zero)


def empty_dims(value: ov.Output, axis: int, stacked: bool = True) -> list[int] | None:
    """The shape of zero stacked iterations along `axis`: `value`'s dims with that axis 0, for
    a `stacked` value (one that has the axis: a per-iteration part or a stack); for a
    per-iteration value without it, 0 is inserted at `axis`.

    Dims that are not static are 0: without an iteration nothing determines them. None when
    the rank is unknown.
    """
    shape = value.get_partial_shape()
    if shape.rank.is_dynamic:
        return None
    dims = lengths(shape, 0)
    if stacked:
        dims[axis] = 0
    else:
        dims.insert(axis, 0)
    return dims


def empty_shape(value: ov.Output, axis: int, stacked: bool = True) -> ov.Output | None:
    """`empty_dims` as a constant shape vector (`ov.op.Constant`: built per loop, and several
    times cheaper than `opset15.constant`)."""
    dims = empty_dims(value, axis, stacked)
    return None if dims is None else ov.op.Constant(np.array(dims, np.int64)).output(0)


def empty_stack(value: ov.Output, axis: int, stacked: bool = True) -> ov.Output:
    """The stack of zero iterations, shaped as `empty_dims` says ([0] for unknown rank)."""
    dims = empty_dims(value, axis, stacked) or [0]
    return ops.constant(np.zeros(dims, np.uint8), value.get_element_type()).output(0)


def reverse(value: ov.Output, axis: int) -> ov.Output:
    """`value` reversed along `axis` (a prepended scan output): a Slice with step -1 from the
    last element to -(length + 1), computed from the length (no INT64_MIN: see the notes on i32)."""
    minus_one = ops.constant(np.array([-1], np.int64))
    zero = ops.constant(np.array([0], np.int64))
    stop = ops.subtract(minus_one, ops.unsqueeze(length(value, axis), zero))
    axes = ops.constant(np.array([axis], np.int64))
    return ops.slice(value, minus_one, stop, minus_one, axes).output(0)


def passthrough(value: ov.Output) -> ov.Output:
    """`value` behind a node of its own (the frontend renames a returned input's tensor)."""
    return ops.convert(value, value.get_element_type()).output(0)


def copy(value: ov.Output) -> ov.Output:
    """A computed copy of `value` that the CPU plugin keeps (it optimises Identity, Convert,
    x*1, x+0, Broadcast, Gather and Slice copies into views).

    Back edges that may share memory with a sliced part, or be a view of a Parameter, get one
    (CPU plugin, 2026.4.1; `CopyBackEdges` states the rule): without it, a back edge whose
    value is a view of a sliced input received the *next* slice, a small elementwise body such
    as acc + x_t * w computed wrong values, and swapped carried values came out unchanged. One
    elementwise op per copied carried value and iteration.
    """
    kind = "LogicalOr" if value.get_element_type() == ov.Type.boolean else "Maximum"
    return opfactory.op(kind, value, value).output(0)


def parameters_for(values: list[ov.Output]) -> list[ov.Node]:
    """A body Parameter per value, of its shape and type."""
    return [ops.parameter(v.get_partial_shape(), v.get_element_type()) for v in values]


def identity_body(values: list[ov.Output]) -> ov.Model:
    """A body whose Results are its Parameters, one per value (parameters_for)."""
    parameters = parameters_for(values)
    return ov.Model([ops.result(p) for p in parameters], parameters)


def if_outputs(
    condition: ov.Output,
    then_branch: tuple[ov.Model, list[ov.Output]],
    else_branch: tuple[ov.Model, list[ov.Output]],
) -> list[ov.Output]:
    """The outputs of If(condition), each branch a body and the outer values its Parameters
    take in order; one output per pair of the bodies' Results."""
    # an Output, not a Node: if_op(Node) makes an If without its condition input
    branch = ops.if_op(condition)
    (then_body, then_values), (else_body, else_values) = then_branch, else_branch
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    for value, parameter in zip(then_values, then_body.get_parameters()):
        branch.set_input(value, parameter, None)
    for value, parameter in zip(else_values, else_body.get_parameters()):
        branch.set_input(value, None, parameter)
    return [
        branch.set_output(then_result, else_result)
        for then_result, else_result in zip(then_body.get_results(), else_body.get_results())
    ]


def dynamic_besides(value: ov.Output, axis: int) -> bool:
    shape = value.get_partial_shape()
    return shape.rank.is_dynamic or any(
        dim.is_dynamic for index, dim in enumerate(dimensions(shape)) if index != axis
    )


def all_ops(model: ov.Model) -> Iterator[ov.Node]:
    """Every op of `model` and of the bodies of its Loops, TensorIterators and Ifs, each op before
    its bodies' (an If's then body before its else body). A graph's ops are listed when the walk
    enters it, after the ops before its holder were handed out. One generator, a stack of the
    graphs entered: nested generators (`yield from`) passed each op up through one frame per
    enclosing body (quadratic in depth)."""
    entered: list[Iterator[ov.Node] | ov.Model] = [model]  # a Model: not entered yet
    while entered:
        ops = entered[-1]
        if not isinstance(ops, Iterator):
            ops = entered[-1] = iter(ops.get_ordered_ops())
        for op in ops:
            yield op
            kind = op.get_type_name()
            if kind in ("Loop", "TensorIterator"):
                entered.append(op.get_function())
                break
            if kind == "If":
                entered += (op.get_else_body(), op.get_then_body())
                break
        else:
            entered.pop()


def twin(node: ov.Node, excluded: Collection[int] = ()) -> ov.Node | None:
    """Another op that computes what `node` does: one reading the same values (Constants: equal
    ones) with the same type, version and attributes, not among the instance ids `excluded`;
    None when there is none (or `node` reads Constants alone). Found among the readers of
    `node`'s first input that is not a Constant."""
    values = node.input_values()
    read = [value for value in values if not is_constant(value)]
    if not read or computed_copy(node, [_source(value) for value in values]):
        return None
    kind, size, key = node.get_type_name(), node.get_output_size(), None
    excluded = {*excluded, node.get_instance_id()}
    for reader in read[0].get_target_inputs():
        other = reader.get_node()
        # the type first: most readers are of another, and a key reads every input's source
        if other.get_type_name() != kind or other.get_output_size() != size:
            continue
        if other.get_instance_id() in excluded:
            continue
        key = computation_key(node) if key is None else key
        if computation_key(other) == key and same_attributes(node, other):
            return other
    return None


def computation_key(node: ov.Node) -> tuple:
    """`node`'s type and version, and what it reads: each input's op and output index, a
    Constant by its type and bytes (equal keys and `same_attributes`: the same value)."""
    info = node.get_type_info()
    key: list = [info.name, info.version_id]
    for value in node.input_values():
        source = value.get_node()
        if source.get_type_name() == "Constant":
            data = source.get_data()
            kind = source.get_output_element_type(0).get_type_name()
            key.append((kind, data.shape, data.tobytes()))
        else:
            key.append(_source(value))
    return tuple(key)


def sources_key(node: ov.Node) -> tuple:
    """`node`'s type name and what it reads, each Constant as None: ops of equal
    `computation_key`s have equal sources keys (a first test that reads no Constant's bytes)."""
    key: list = [node.get_type_name()]
    for value in node.input_values():
        source = value.get_node()
        if source.get_type_name() == "Constant":
            key.append(None)
        else:
            key.append((source.get_instance_id(), value.get_index()))
    return tuple(key)


class Computations:
    """Ops added one by one, by what they compute: whether an op computes what one added
    before does (equal `computation_key`s and `same_attributes`). The keys, which read each
    Constant's bytes, are made only for ops whose `sources_key` another op shares."""

    __slots__ = ("_by_sources",)

    def __init__(self) -> None:
        # sources key -> [(op, its computation key once made)]
        self._by_sources: dict[tuple, list[tuple[ov.Node, tuple | None]]] = {}

    def add(self, node: ov.Node) -> bool:
        """Add `node`; whether an op added before computes what it does."""
        earlier = self._by_sources.setdefault(sources_key(node), [])
        key = computation_key(node) if earlier else None
        for index, (other, other_key) in enumerate(earlier):
            if other_key is None:
                other_key = computation_key(other)
                earlier[index] = (other, other_key)
            if other_key == key and same_attributes(node, other):
                return True
        earlier.append((node, key))
        return False


def same_attributes(node: ov.Node, other: ov.Node) -> bool:
    """Whether two ops have equal attributes."""
    return attributes_key(node) == attributes_key(other)


def attributes_key(node: ov.Node) -> str:
    """`node`'s attributes as one comparable value."""
    return repr(sorted(node.get_attributes().items()))


def computed_copy(node: ov.Node, sources: list[tuple[int, int]] | tuple) -> bool:
    """Whether `node`, reading `sources` (op instance id, output index), is one of the copies
    the CPU plugin needs computed (`copy`: x op x; `passthrough`: a Convert to its input's
    type), which merging equal computations must leave alone."""
    if len(set(sources)) < len(sources):
        return True
    return node.get_type_name() == "Convert" and node.get_input_element_type(
        0
    ) == node.get_output_element_type(0)


def _source(value: ov.Output) -> tuple[int, int]:
    return value.get_node().get_instance_id(), value.get_index()


def ops_by_type(model: ov.Model) -> dict[str, list[ov.Node]]:
    """The ops of `model` and of the bodies in it (as `all_ops`, in its order) by type name:
    one walk for the whole-model steps that each look for a few types."""
    return walk(model).by_type


class Walk(Record):
    """One walk of a model and of the bodies in it: the ops by type name (as `all_ops`, in its
    order), and the ordered ops of each graph holding a body (outer graphs first)."""

    __slots__ = ("by_type", "holders")

    def __init__(self, by_type: dict[str, list[ov.Node]], holders: list[list[ov.Node]]) -> None:
        self.by_type = by_type
        self.holders = holders


def walk(model: ov.Model) -> Walk:
    """`model` and the bodies in it walked once (`Walk`)."""
    by_type: dict[str, list[ov.Node]] = {}
    graphs: list[tuple[list[ov.Node], bool]] = []

    def visit(graph: ov.Model) -> None:
        ops = graph.get_ordered_ops()
        at = len(graphs)
        graphs.append((ops, False))
        for op in ops:
            kind = op.get_type_name()
            by_type.setdefault(kind, []).append(op)
            if kind in ("Loop", "TensorIterator"):
                bodies = (op.get_function(),)
            elif kind == "If":
                bodies = (op.get_then_body(), op.get_else_body())
            else:
                continue
            graphs[at] = (ops, True)
            for body in bodies:
                visit(body)

    visit(model)
    return Walk(by_type, [ops for ops, holds in graphs if holds])


SUBGRAPH_OPS = frozenset({"Loop", "TensorIterator", "If"})


def structure_digest(model: ov.Model) -> bytes | None:
    """A digest of what `model` computes and how, without its names: per op in order, its type
    and version, attributes, runtime info's keys, input sources (by op position and output index),
    output types and shapes, and a Constant's bytes; the Parameters' and Results' order. Two
    models of equal digests differ at most in their names. None for a model with an op holding
    a body (Loop, TensorIterator, If), whose bodies are not looked into. (One repr of all, then
    the Constants' bytes, hashed: a repr and an update per op took a third longer.)"""
    nodes = model.get_ordered_ops()
    position = {node.get_instance_id(): index for index, node in enumerate(nodes)}
    ends = [*model.get_parameters(), *model.get_results()]
    described: list = [[position[node.get_instance_id()] for node in ends]]
    constants = []
    for node in nodes:
        info = node.get_type_info()
        if info.name in SUBGRAPH_OPS:
            return None
        sources = [
            (position[v.get_node().get_instance_id()], v.get_index()) for v in node.input_values()
        ]
        outputs = [
            (out.get_element_type().get_type_name(), str(out.get_partial_shape()))
            for out in node.outputs()
        ]
        rt_info = node.get_rt_info()  # its keys: str() of every value is "<OVAny class>"
        runtime = sorted(runtime_keys(rt_info)) if len(rt_info) else ()
        attributes = sorted(node.get_attributes().items())
        described.append((info.name, info.version_id, attributes, runtime, sources, outputs))
        if info.name == "Constant":
            constants.append(np.ascontiguousarray(node.get_data()).tobytes())
    digest = hashlib.blake2b(repr(described).encode(), digest_size=20)
    for data in constants:
        digest.update(data)
    return digest.digest()
