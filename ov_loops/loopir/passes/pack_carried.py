"""Pass: carried tensors of one shape but the last dim travel in one back edge (an LSTM's h and
c as one [B, 2H] value).

Why: on the CPU plugin's dynamic path (any dynamic port: a dynamic T suffices) every back edge
costs each iteration: its body input is redefined and its copy rebuilt
(`prepareDynamicBackEdges`). Measured on the flax LSTM's hand-built floor (benchmarks/
flax_default.py, B and T dynamic, H = 8): h and c in one back edge, with the Split and Concat
it takes, ran 0.97x and 1.17x of onnxruntime at B = 1 and 16 against 1.24x and 1.40x apart.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import defaultdict
from typing import ClassVar

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract import ports
from ov_loops.contract.kinds import TENSOR
from ov_loops.contract.ports import UNNUMBERED
from ov_loops.contract.spec import LastValueOutput, MergedInput
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.steps import AfterLoop
from ov_loops.ovgraph import dimensions, lengths
from ov_loops.record import Record

MAX_PACKED = 4096  # elements of a packed value of static shape
MAX_PACKED_WIDTH = 256  # its last dim when its other dims are dynamic


class PackCarriedValues(LoopPass):
    """Carry tensor values of one element type and one shape except a static last dim in one
    merged input::

        members: carried tensors v_1..v_k (k >= 2), each returned with its Parameter's shape,
                 whose dims but the last are provably equal at the start and, if equal at an
                 iteration's start, after it (OpenVINO's symbols: one per dynamic dim of the
                 graph's Parameters, propagated by its shape inference; see _proven)
        outer:   packed_0 = Concat(v_1_0, ..., v_k_0, axis=last)
        body:    v_1, ..., v_k = VariadicSplit(packed, last, widths)   (the Parameters' reads)
                 packed' = Concat(v_1', ..., v_k', last)                (the new back edge)

    Only for a loop the CPU plugin runs on its dynamic path (_on_dynamic_path). The members'
    Results stay, for their outputs; they are no longer back edges. `check` compares no
    per-iteration values of a loop so packed (its carried values are gone)."""

    name = "pack-carried-values"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        if sum(value.kind == TENSOR for value in loop.carried) < 2 or not _on_dynamic_path(loop):
            return loop  # a pack has two members at least, each a carried tensor
        members = _members(loop)
        if len(members) < 2:
            return loop
        return _packed(loop, members).noting(f"carried {len(members)} values in one back edge")


def _on_dynamic_path(loop: LoopIR) -> bool:
    """Whether the CPU plugin runs the Loop-5 on its dynamic path: a port of dynamic shape (an
    outer value, a body Result, or a concatenated output of a runtime trip count). On the
    static path a back edge costs one copy per iteration, no more than the Split and Concat."""
    if loop.trip.runtime and loop.spec.concatenated_outputs:
        return True
    values = [*loop.outer.values(), *(result.input_value(0) for result in loop.body.get_results())]
    return any(value.get_partial_shape().is_dynamic for value in values)


def _shape_key(loop: LoopIR, index: int) -> tuple | None:
    """What members of a pack share (element type, dims but the last), or None when the merged
    input at `index` cannot be a member: its value keeps its Parameter's shape, of static rank
    at least 1 and a static last dim."""
    entry = loop.spec.merged_inputs[index]
    parameter = loop.body.get_parameters()[entry.body_parameter]
    shape = parameter.get_partial_shape()
    returned = loop.body_value(entry.body_result)
    if shape.rank.is_dynamic or shape.rank.get_length() == 0 or shape[-1].is_dynamic:
        return None
    if returned.get_partial_shape().to_string() != shape.to_string():
        return None
    if returned.get_element_type() != parameter.get_element_type():
        return None
    dims = tuple(str(dim) for dim in dimensions(shape)[:-1])
    return parameter.get_element_type().get_type_name(), dims


def _members(loop: LoopIR) -> list[int]:
    """The merged inputs (positions in spec.merged_inputs) of the largest pack, [] if none."""
    tensors = [value.merged[0] for value in loop.carried if value.kind == TENSOR]
    groups: dict[tuple, list[int]] = defaultdict(list)
    for index in tensors:
        key = _shape_key(loop, index)
        if key is not None:
            groups[key].append(index)
    candidates = sorted((g for g in groups.values() if len(g) >= 2), key=len, reverse=True)
    if not candidates:
        return []
    starts = _with_symbols([loop.outer[port] for port in sorted(loop.outer)])
    if starts is None:
        return []
    by_port = dict(zip(sorted(loop.outer), starts))
    for group in candidates:
        kept = _proven(loop, group, by_port)
        if len(kept) >= 2 and _small(loop, kept):
            return kept
    return []


def _small(loop: LoopIR, members: list[int]) -> bool:
    """Whether the packed value is small enough for its Split and Concat (two more copies of
    it per iteration) to cost less than a back edge: at most MAX_PACKED elements when its
    dims are static, a last dim of at most MAX_PACKED_WIDTH when not (LSTM H = 256 B = 16,
    rows dynamic: 1.01x of apart; H = 64 B = 16: 0.94x; H = 256 B = 1: 0.90x)."""
    parameters = loop.body.get_parameters()
    shapes = [
        parameters[loop.spec.merged_inputs[index].body_parameter].get_partial_shape()
        for index in members
    ]
    width = sum(shape[-1].get_length() for shape in shapes)
    if shapes[0].is_dynamic:
        return width <= MAX_PACKED_WIDTH
    return math.prod(lengths(shapes[0])[:-1]) * width <= MAX_PACKED


def _with_symbols(values: list[ov.Output]) -> list[ov.PartialShape] | None:
    """The shapes of `values` as OpenVINO's shape inference finds them on a copy of the graph
    computing them whose Parameters' dynamic dims have a symbol each (a dim read through
    ShapeOf, Gather, Concat into a Broadcast keeps its symbol); None if no model can be made
    of that graph."""
    parameters, seen, pending = [], set(), [value.get_node() for value in values]
    while pending:
        node = pending.pop()
        if node.get_instance_id() in seen:
            continue
        seen.add(node.get_instance_id())
        if node.get_type_name() == "Parameter":
            parameters.append(node)
        pending.extend(value.get_node() for value in node.input_values())
    try:
        copy = ov.Model([ops.result(value) for value in values], parameters).clone()
    except RuntimeError:
        return None
    for parameter in copy.get_parameters():
        parameter.set_partial_shape(_symbolic(parameter.get_partial_shape()))
    copy.validate_nodes_and_infer_types()
    return [result.get_input_partial_shape(0) for result in copy.get_results()]


def _symbolic(shape: ov.PartialShape) -> ov.PartialShape:
    """`shape` with a fresh symbol on each dynamic dim that has none."""
    if shape.rank.is_dynamic:
        return shape
    for axis in range(shape.rank.get_length()):
        dim = shape[axis]
        if dim.is_dynamic and not dim.has_symbol():
            dim.set_symbol(ov.Symbol())
            shape[axis] = dim
    return shape


def _same_dims(first: ov.PartialShape, second: ov.PartialShape) -> bool:
    """Whether the dims of `first` and `second` but the last are provably equal: static and
    equal, or dynamic with one symbol."""
    if first.rank.is_dynamic or second.rank.is_dynamic or first.rank != second.rank:
        return False
    for one, other in zip(dimensions(first)[:-1], dimensions(second)[:-1]):
        if one.is_static or other.is_static:
            if not (one.is_static and other.is_static and one.get_length() == other.get_length()):
                return False
        elif not (
            one.has_symbol() and other.has_symbol() and one.get_symbol() == other.get_symbol()
        ):
            return False
    return True


def _proven(loop: LoopIR, group: list[int], starts: dict[int, ov.PartialShape]) -> list[int]:
    """The members of `group` whose dims but the last provably stay those of the first one's
    start (see the class): on a copy of the body, members' Parameters take their starts' dims
    (the induction's hypothesis), invariant and sliced inputs their outer values' symbols,
    every other dynamic dim a fresh symbol; after shape inference each member's returned value
    must have those dims again."""
    merged = loop.spec.merged_inputs
    first = starts[merged[group[0]].external_port]
    group = [k for k in group if _same_dims(starts[merged[k].external_port], first)]
    members = {merged[k].body_parameter for k in group}
    body = loop.body.clone()
    parameters = body.get_parameters()
    for entry in loop.spec.inputs():
        parameter = parameters[entry.body_parameter]
        shape = parameter.get_partial_shape()
        if entry.body_parameter in members:
            shape = ov.PartialShape([*dimensions(first)[:-1], shape[-1]])
        elif not isinstance(entry, MergedInput):
            shape = _outer_dims(shape, starts[entry.external_port], getattr(entry, "axis", None))
        parameter.set_partial_shape(_symbolic(shape))
    body.validate_nodes_and_infer_types()
    results = body.get_results()
    returned = [results[merged[k].body_result].get_input_partial_shape(0) for k in group]
    return [k for k, shape in zip(group, returned) if _same_dims(shape, first)]


def _outer_dims(
    shape: ov.PartialShape, outer: ov.PartialShape, axis: int | None
) -> ov.PartialShape:
    """Body Parameter `shape` with the dims (and symbols) of its outer value where it has
    dynamic ones, but the sliced `axis`."""
    if shape.rank.is_dynamic or outer.rank != shape.rank:
        return shape
    for position in range(shape.rank.get_length()):
        if shape[position].is_dynamic and position != axis:
            shape[position] = outer[position]
    return shape


def _packed(loop: LoopIR, members: list[int]) -> LoopIR:
    """`loop` with the merged inputs at `members` carried as one (see the class)."""
    spec = loop.spec
    entries = [spec.merged_inputs[index] for index in members]
    parameters, results = list(loop.body.get_parameters()), list(loop.body.get_results())
    olds = [parameters[entry.body_parameter] for entry in entries]
    shape = olds[0].get_partial_shape()
    axis = shape.rank.get_length() - 1
    widths = [old.get_partial_shape()[axis].get_length() for old in olds]
    shape[axis] = sum(widths)
    packed = ops.parameter(shape, olds[0].get_element_type())
    packed.set_friendly_name(f"{loop.path}/packed")
    split = ops.variadic_split(packed, ops.constant(np.int64(axis)), ops.constant(np.int64(widths)))
    for old, part in zip(olds, split.outputs()):
        for reader in list(old.output(0).get_target_inputs()):
            reader.replace_source_output(part)
    returned = [loop.body_value(entry.body_result) for entry in entries]
    results.append(ops.result(ops.concat(returned, axis)))
    dropped = {entry.body_parameter for entry in entries}
    kept = [k for k in range(len(parameters)) if k not in dropped]
    moved = {old: new for new, old in enumerate(kept)}
    inputs = [
        dataclasses.replace(entry, body_parameter=moved[entry.body_parameter])
        for entry in spec.inputs()
        if entry not in entries
    ]
    inputs.append(MergedInput(UNNUMBERED, len(kept), len(results) - 1))
    starts = [loop.outer[entry.external_port] for entry in entries]
    start = ops.concat(starts, axis)
    start.set_friendly_name(f"{loop.path}/packed_initial")
    sources = [loop.outer[e.external_port] for e in spec.inputs() if e not in entries]
    outer = dict(enumerate([*sources, start.output(0)], start=2))
    current = None if spec.current_iteration is None else moved[spec.current_iteration]
    outputs, loop_results = _last_values_from_pack(loop, entries, len(results) - 1, widths)
    numbered = ports.number_ports(
        inputs,
        outputs,
        spec.trip_count_source,
        spec.trip_count,
        current,
        spec.execution_condition,
    )
    kept_merged = [k for k in range(len(spec.merged_inputs)) if k not in members]
    renamed = {old: new for new, old in enumerate(kept_merged)}
    carried = tuple(
        dataclasses.replace(value, merged=tuple(renamed[k] for k in value.merged))
        for value in loop.carried
        if set(value.merged).isdisjoint(members)
    )
    body = loop.with_body(results, [*(parameters[k] for k in kept), packed], numbered)
    return body.replace(outer=outer, carried=carried, results=loop_results)


def _last_values_from_pack(
    loop: LoopIR, entries: list[MergedInput], packed: int, widths: list[int]
) -> tuple[list, tuple[LoopResult, ...]]:
    """The spec's outputs and the loop's results after packing: a last-value output of a
    member's Result reads the packed Result (body Result `packed`) and its result takes the
    member's slot (`Unpacked`): after no iteration Loop-5 gives a back edge's initial value,
    which the member's Result, no longer a back edge, would not."""
    offsets = dict(zip((e.body_result for e in entries), itertools.accumulate([0, *widths])))
    width = dict(zip((e.body_result for e in entries), widths))
    outputs, slots = [], {}
    for entry in loop.spec.outputs():
        if isinstance(entry, LastValueOutput) and entry.body_result in offsets:
            slots[entry.external_port] = (offsets[entry.body_result], width[entry.body_result])
            entry = dataclasses.replace(entry, body_result=packed)
        outputs.append(entry)
    rank = loop.body.get_parameters()[entries[0].body_parameter].get_partial_shape().rank
    results = tuple(
        result.with_step(Unpacked(rank.get_length() - 1, *slots[result.port]))
        if result.port in slots
        else result
        for result in loop.results
    )
    return outputs, results


class Unpacked(Record):
    """The slot of a packed carried value that is one member's::

    value = value[..., start : start + width]    (along `axis`, the last)
    """

    __slots__ = ("axis", "start", "width")

    def __init__(self, axis: int, start: int, width: int) -> None:
        self.axis = axis
        self.start = start
        self.width = width

    phase: ClassVar[int] = 0

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        return [
            ops.slice(
                value,
                ops.constant(np.int64([step.start])),
                ops.constant(np.int64([step.start + step.width])),
                ops.constant(np.int64([1])),
                ops.constant(np.int64([step.axis])),
            ).output(0)
            for value, step in items
        ]
