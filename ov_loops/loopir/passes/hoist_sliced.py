"""Pass: computation on the sliced parts alone moves before the loop, batched over the parts
(Theano's "push out sequences").

    for i: x_t = X[i]; y_t = x_t @ W + b; h = f(y_t, h)        (X sliced along axis 0)
    ->  Y = X @ W + b;  for i: y_t = Y[i]; h = f(y_t, h)       (one MatMul before the loop)

The region: body values computed from sliced parts (each read through the Squeeze the frontend
puts after the part axis), Constants and invariant inputs by ops with a batching rule. A rule
says how one op behaves when some of its inputs carry one more axis, as jax's vmap does: where
that axis is in its output and how to build the op on the batched inputs; it may refuse. A node
without a rule, or whose rule refuses, ends the region. Parts of different sliced inputs combine
only when they are cut alike (same axis, start, stride, end and length).

A region value that something outside the region reads, and that a heavy op computes or feeds
on, is computed once before the loop on the whole sliced tensors and becomes a new sliced input,
cut like the parts it came from; its part (squeezed) replaces it in the body. Heavy: a MatMul of
at most MAX_ROWS_PER_PART rows per iteration (static), which the loop would run as a small,
weight-bound product; measured on the bench RNN (H 256, T 1000, CPU f32, one thread, 2026.4.1),
the loop's time by rows per iteration: 1: 0.86-0.89, 2: 0.90-0.99, 4: 0.98-1.04, 8: 0.93-0.98,
16: 1.01-1.06 (the batched product does the same work, and writes a tensor as large as the
sliced input). Elementwise work alone is not hoisted: forced, it made the same RNN with x_t * b
for x_t W 1.02-1.03 (1 row) and 1.04-1.07 (16 rows) times slower (benchmarks/hoist_rnn.py).
The body nodes it replaces are left unreachable; sliced and invariant inputs nobody reads any
more are dropped.

Extra rows: the batched values cover the whole sliced tensors even when the loop runs fewer
iterations (a trip count below their length, an early exit, no iteration at all); the rows no
iteration reads are computed and never read. The ops with rules have no side effects and do not
trap (Divide only on real numbers); the price is time and a tensor as long as the sliced input.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from functools import partial

import numpy as np
import openvino as ov
import openvino.opset15 as ops
from openvino.utils.node_factory import NodeFactory

from ov_loops.contract import ports
from ov_loops.contract.ports import UNNUMBERED
from ov_loops.contract.spec import SlicedInput
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.ovgraph import dimensions
from ov_loops.record import Record

Build = Callable[[list[ov.Output]], ov.Output]


class Batching(Record):
    """A node on inputs with one more axis: `axis` is that axis in its output, `build` makes the
    batched node from the batched inputs (in the node's input order)."""

    __slots__ = ("axis", "build")

    def __init__(self, axis: int, build: Build) -> None:
        self.axis = axis
        self.build = build


# A batching rule: (node, the extra axis of each input or None for an input without it) ->
# Batching, or None when the node cannot be batched so.
Rule = Callable[[ov.Node, list[int | None]], Batching | None]
MAX_ROWS_PER_PART = 8


def _light(node: ov.Node) -> bool:
    return False


class _Registered(Record):
    __slots__ = ("batch", "heavy")

    def __init__(self, batch: Rule, heavy: Callable[[ov.Node], bool]) -> None:
        self.batch = batch
        self.heavy = heavy


RULES: dict[str, _Registered] = {}


def batching_rule(*op_types: str, heavy=_light) -> Callable[[Rule], Rule]:
    """Register the decorated rule for `op_types`; the body nodes `heavy` (node -> bool) calls
    heavy make a region worth hoisting."""

    def register(rule: Rule) -> Rule:
        for op_type in op_types:
            RULES[op_type] = _Registered(rule, heavy)
        return rule

    return register


def rebuilt(node: ov.Node, inputs: list[ov.Output], **changed) -> ov.Output:
    """A node of `node`'s type, version and attributes (with `changed` ones) on `inputs`."""
    factory = NodeFactory(node.get_type_info().version_id)
    attributes = node.get_attributes() | changed
    return factory.create(node.get_type_name(), inputs, attributes).output(0)


def _i64(*values: int) -> ov.Output:
    return ops.constant(np.array(values, np.int64)).output(0)


def _ranks(node: ov.Node) -> list[int] | None:
    """The static ranks of the node's inputs (None if one is dynamic)."""
    shapes = [value.get_partial_shape() for value in node.input_values()]
    if any(shape.rank.is_dynamic for shape in shapes):
        return None
    return [shape.rank.get_length() for shape in shapes]


def _common_axis(ranks: list[int], axes: list[int | None], rank: int) -> int | None:
    """The extra axis of a numpy-broadcast result of rank `rank` (without it): every batched
    input's axis, right-aligned; None when they disagree."""
    found = {axis + rank - own for own, axis in zip(ranks, axes) if axis is not None}
    return found.pop() if len(found) == 1 else None


def _aligned(value: ov.Output, rank: int, axis: int, result_rank: int) -> ov.Output:
    """An input without the extra axis, of `rank`, given a length-1 axis where the result's
    extra `axis` falls among its dims (right-aligned numpy broadcasting needs none before)."""
    position = axis - (result_rank - rank)
    return ops.unsqueeze(value, _i64(position)).output(0) if position > 0 else value


def _broadcast_inputs(inputs, ranks, axes, axis: int, result_rank: int) -> list[ov.Output]:
    return [
        value if own_axis is not None else _aligned(value, rank, axis, result_rank)
        for value, rank, own_axis in zip(inputs, ranks, axes)
    ]


@batching_rule(
    "Tanh", "Sigmoid", "Relu", "Exp", "Log", "Negative", "Abs", "Sqrt", "Convert", "Clamp",
    "Erf", "Floor", "Ceiling", "Sin", "Cos", "Sign", "Elu", "Gelu", "SoftPlus", "HSigmoid",
    "HSwish", "Mish", "LogicalNot", "Identity",
)  # fmt: skip
def _unary(node: ov.Node, axes: list[int | None]) -> Batching | None:
    """An elementwise op of one input: the extra axis stays where it is."""
    return Batching(axes[0], partial(rebuilt, node)) if len(axes) == 1 else None


@batching_rule("Add", "Subtract", "Multiply", "Divide", "Maximum", "Minimum", "Power")
def _binary(node: ov.Node, axes: list[int | None]) -> Batching | None:
    """A numpy-broadcasting elementwise op: the batched inputs' axes must agree once
    right-aligned; an input without the extra axis gets a length-1 one where it falls among its
    dims. Divide only on real numbers (an integer division by zero traps, even in a row no
    iteration reads)."""
    ranks = _ranks(node)
    if ranks is None or node.get_attributes().get("auto_broadcast") != "numpy":
        return None
    if node.get_type_name() == "Divide" and not node.get_output_element_type(0).is_real():
        return None
    rank = max(ranks)
    axis = _common_axis(ranks, axes, rank)
    if axis is None:
        return None

    def build(inputs: list[ov.Output]) -> ov.Output:
        return rebuilt(node, _broadcast_inputs(inputs, ranks, axes, axis, rank))

    return Batching(axis, build)


def _few_rows(node: ov.Node) -> bool:
    """Whether an op's per-iteration output has at most MAX_ROWS_PER_PART rows (all its dims but
    the last, static)."""
    shape = node.get_output_partial_shape(0)
    if shape.rank.is_dynamic or not all(dim.is_static for dim in dimensions(shape)[:-1]):
        return False
    return math.prod(dim.get_length() for dim in dimensions(shape)[:-1]) <= MAX_ROWS_PER_PART


@batching_rule("MatMul", heavy=_few_rows)
def _matmul(node: ov.Node, axes: list[int | None]) -> Batching | None:
    """MatMul with the extra axis on either side (or both). Among an operand's batch dims it
    broadcasts like an elementwise op; a batched vector becomes a matrix whose rows (or columns,
    on the right) are the parts; the extra axis just before K of a left matrix [..., M, T, K]
    makes T rows per row when the right operand has no batch dims. Otherwise refused among the
    last two dims of a matrix."""
    ranks = _ranks(node)
    if ranks is None:
        return None
    vectors = [index for index, axis in enumerate(axes) if axis is not None and ranks[index] == 1]
    if vectors:
        return _batched_vector(node, ranks, axes, vectors)
    left_rows = axes[0] == ranks[0] - 1 and axes[1] is None and ranks[1] <= 2
    if left_rows and not node.get_attributes()["transpose_a"]:
        return Batching(axes[0], partial(rebuilt, node))
    if any(axis is not None and axis > rank - 2 for rank, axis in zip(ranks, axes)):
        return None
    rank = max(ranks)
    axis = _common_axis(ranks, axes, rank)
    if axis is None:
        return None

    def build(inputs: list[ov.Output]) -> ov.Output:
        aligned = [
            value if own is not None or own_rank == 1 else _aligned(value, own_rank, axis, rank)
            for value, own_rank, own in zip(inputs, ranks, axes)
        ]
        return rebuilt(node, aligned)

    return Batching(axis, build)


def _batched_vector(node: ov.Node, ranks, axes, vectors: list[int]) -> Batching | None:
    """MatMul with one batched vector operand and one operand without the extra axis: a left
    vector becomes the rows of A ([T, K]), a right one the columns of B ([K, T]); the extra
    axis of the result is that of M (or N)."""
    if len(vectors) != 1 or axes[1 - vectors[0]] is not None:
        return None
    side = vectors[0]
    other = ranks[1 - side]
    if side == 0:
        changed = {"transpose_a": axes[0] == 1}
        axis = other - 2 if other >= 2 else 0
    else:
        changed = {"transpose_b": axes[1] == 0}
        axis = other - 1 if other >= 2 else 0
    return Batching(axis, lambda inputs: rebuilt(node, inputs, **changed))


# -- the region --------------------------------------------------------------------------------
class Slicing(Record):
    """How parts are cut from a sliced tensor: its slicing axis, start, stride and end, and its
    length along that axis (a static length, or the outer value when it is dynamic)."""

    __slots__ = ("axis", "start", "stride", "end", "length")

    def __init__(
        self, axis: int, start: int, stride: int, end: int, length: int | ov.Output
    ) -> None:
        self.axis = axis
        self.start = start
        self.stride = stride
        self.end = end
        self.length = length

    def agrees(self, other: Slicing) -> bool:
        """Whether parts cut so and parts cut as `other` are the same rows of their tensors."""
        mine = (self.axis, self.start, self.stride, self.end)
        if mine != (other.axis, other.start, other.stride, other.end):
            return False
        if isinstance(self.length, int) != isinstance(other.length, int):
            return False
        return self.length == other.length


class _Value(Record):
    """A region value and how to compute it before the loop: `build` on the outer forms of the
    body nodes it `reads`. Batched values (per-iteration parts) have the extra `axis` in their
    outer form and their parts' `slicing`; `heavy` if a heavy op computes it or feeds it."""

    __slots__ = ("reads", "build", "axis", "slicing", "heavy")

    def __init__(
        self,
        reads: tuple[ov.Node, ...],
        build: Build,
        axis: int | None = None,
        slicing: Slicing | None = None,
        heavy: bool = False,
    ) -> None:
        self.reads = reads
        self.build = build
        self.axis = axis
        self.slicing = slicing
        self.heavy = heavy


def _given(value: ov.Output) -> Build:
    return lambda _inputs: value


def _copied_constant(node: ov.Node) -> Build:
    return lambda _inputs: ov.op.Constant(node.get_tensor_view(), shared_memory=False).output(0)


def _length(value: ov.Output, axis: int) -> int | ov.Output:
    shape = value.get_partial_shape()
    if shape.rank.is_static and shape[axis].is_static:
        return shape[axis].get_length()
    return value


def _squeezes(node: ov.Node, axis: int) -> bool:
    """Whether `node` is a Squeeze of exactly `axis` of its first input (a constant axes)."""
    if node.get_type_name() != "Squeeze" or node.get_input_size() != 2:
        return False
    rank = node.input_value(0).get_partial_shape().rank
    axes = node.input_value(1).get_node()
    if rank.is_dynamic or axes.get_type_name() != "Constant":
        return False
    squeezed = [int(value) % rank.get_length() for value in np.ravel(axes.get_data())]
    return squeezed == [axis]


def _leaves(loop: LoopIR) -> dict[int, _Value]:
    """The region's inputs by node id: the Squeezes of sliced parts (parts of single rows) and
    the Parameters of invariant inputs."""
    parameters = loop.body.get_parameters()
    leaves = {}
    for entry in loop.spec.invariant_inputs:
        node = parameters[entry.body_parameter]
        leaves[node.get_instance_id()] = _Value((), _given(loop.outer[entry.external_port]))
    for entry in loop.spec.sliced_inputs:
        if abs(entry.stride) != 1:
            continue
        outer = loop.outer[entry.external_port]
        cut = Slicing(entry.axis, entry.start, entry.stride, entry.end, _length(outer, entry.axis))
        for target in parameters[entry.body_parameter].output(0).get_target_inputs():
            node = target.get_node()
            if _squeezes(node, entry.axis):
                leaves[node.get_instance_id()] = _Value((), _given(outer), entry.axis, cut)
    return leaves


def _derived(node: ov.Node, region: dict[int, _Value]) -> _Value | None:
    """The region value `node` computes from region values, if its rule batches it."""
    registered = RULES.get(node.get_type_name())
    if registered is None or node.get_output_size() != 1:
        return None
    reads = tuple(value.get_node() for value in node.input_values())
    inputs = [region.get(read.get_instance_id()) for read in reads]
    if any(value is None for value in inputs):
        return None
    batched = [value for value in inputs if value.axis is not None]
    if not batched:
        return _Value(reads, partial(rebuilt, node))
    slicing = batched[0].slicing
    if not all(value.slicing.agrees(slicing) for value in batched):
        return None
    batching = registered.batch(node, [value.axis for value in inputs])
    if batching is None:
        return None
    heavy = registered.heavy(node) or any(value.heavy for value in batched)
    return _Value(reads, batching.build, batching.axis, slicing, heavy)


def _region(loop: LoopIR) -> dict[int, _Value]:
    """Every body value computable before the loop, by node id."""
    region = _leaves(loop)
    for node in loop.body.get_ordered_ops():
        key = node.get_instance_id()
        if key in region:
            continue
        if node.get_type_name() == "Constant":
            region[key] = _Value((), _copied_constant(node))
        else:
            value = _derived(node, region)
            if value is not None:
                region[key] = value
    return region


# -- the pass ----------------------------------------------------------------------------------
class HoistSlicedComputation(LoopPass):
    """Compute the heavy work on sliced parts alone once before the loop, batched::

    region  = body values from sliced parts, Constants, invariant inputs (batching rules)
    hoisted = region values read outside the region that a heavy op computes or feeds on
    for v in hoisted:  V = v batched on the whole sliced tensors (before the loop)
                       sliced input V (v's extra axis, the parts' start/stride/end)
                       body: v <- squeeze(part of V)
    drop the sliced and invariant inputs nobody reads any more
    """

    name = "hoist-sliced-computation"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        if not any(abs(entry.stride) == 1 for entry in loop.spec.sliced_inputs):
            return loop  # no sliced part is a leaf: no region value has an axis, none is heavy
        region = _region(loop)
        live = {node.get_instance_id(): node for node in loop.body.get_ordered_ops()}
        hoisted = [node for key, node in live.items() if _worth_hoisting(key, region, live)]
        if not hoisted:
            return loop
        cone = _cone(hoisted, region, live)
        outer = _built(cone, region)
        heavy = [node for node in cone if _is_heavy_op(node, region)]
        loop = _with_sliced_parts(loop, hoisted, region, outer)
        loop = loop.without_parameters(_unread_inputs(loop))
        counts = Counter(node.get_type_name() for node in heavy)
        for op_type, count in sorted(counts.items()):
            loop = loop.noting(f"hoisted {count} {op_type}")
        return loop


def _is_heavy_op(node: ov.Node, region: dict[int, _Value]) -> bool:
    """Whether `node` is a heavy op batched over the parts (what the loop's note counts)."""
    registered = RULES.get(node.get_type_name())
    return (
        registered is not None
        and registered.heavy(node)
        and region[node.get_instance_id()].axis is not None
    )


def _worth_hoisting(key: int, region: dict[int, _Value], live: dict[int, ov.Node]) -> bool:
    """Whether the body value of node `key` is a heavy region value (of static rank) that a live
    node outside the region reads."""
    value = region.get(key)
    if value is None or not value.heavy:
        return False
    output = live[key].output(0)
    if output.get_partial_shape().rank.is_dynamic:
        return False
    readers = {target.get_node().get_instance_id() for target in output.get_target_inputs()}
    return any(reader in live and reader not in region for reader in readers)


def _cone(hoisted: list[ov.Node], region: dict[int, _Value], live: dict[int, ov.Node]):
    """The region nodes the `hoisted` values are computed from (themselves included), in the
    body's topological order."""
    wanted, pending = set(), [node.get_instance_id() for node in hoisted]
    while pending:
        key = pending.pop()
        if key not in wanted:
            wanted.add(key)
            pending.extend(read.get_instance_id() for read in region[key].reads)
    return [node for key, node in live.items() if key in wanted]


def _built(cone: list[ov.Node], region: dict[int, _Value]) -> dict[int, ov.Output]:
    """The outer (batched) form of every node of `cone`, by node id."""
    outer: dict[int, ov.Output] = {}
    for node in cone:
        value = region[node.get_instance_id()]
        reads = [outer[read.get_instance_id()] for read in value.reads]
        outer[node.get_instance_id()] = value.build(reads)
    return outer


def _with_sliced_parts(loop: LoopIR, hoisted, region, outer) -> LoopIR:
    """`loop` with each hoisted body value replaced by the (squeezed) part of a new sliced input
    over its outer form, cut like the parts it came from."""
    parameters = list(loop.body.get_parameters())
    added, values = [], []
    for node in hoisted:
        value, output = region[node.get_instance_id()], node.output(0)
        dims = dimensions(output.get_partial_shape())
        dims.insert(value.axis, ov.Dimension(1))
        part = ops.parameter(ov.PartialShape(dims), output.get_element_type())
        output.replace(ops.squeeze(part, _i64(value.axis)).output(0))
        cut = value.slicing
        added.append(
            SlicedInput(UNNUMBERED, len(parameters), value.axis, cut.start, cut.stride, 1, cut.end)
        )
        parameters.append(part)
        values.append(outer[node.get_instance_id()])
    spec = ports.renumbered(loop.spec, [*loop.spec.inputs(), *added], loop.spec.outputs())
    first = 2 + len(loop.spec.inputs())
    body = loop.with_body(list(loop.body.get_results()), parameters, spec)
    return body.replace(outer={**loop.outer, **dict(enumerate(values, first))})


def _unread_inputs(loop: LoopIR) -> set[int]:
    """The body Parameters of sliced and invariant inputs that no live body node reads."""
    read = {
        value.get_node().get_instance_id()
        for node in loop.body.get_ordered_ops()
        for value in node.input_values()
    }
    parameters = loop.body.get_parameters()
    return {
        entry.body_parameter
        for entry in (*loop.spec.sliced_inputs, *loop.spec.invariant_inputs)
        if parameters[entry.body_parameter].get_instance_id() not in read
    }
