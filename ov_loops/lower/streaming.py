"""What a loop of the main graph keeps across inferences under --stateful, and what cannot stream.

A long sequence fed in chunks, one inference per chunk, must give the results of one pass over
the whole. Each carried value of the loop is one of::

    unchanged: the body returns its own Parameter (through Identity ops and same-type
               Converts): a weight, the whole input, a length passed through the loop
               (jax2onnx, tf2onnx)                        -> its outer value on every call
    counter:   an integer scalar starting from a constant, plus a constant each iteration
               (tf2onnx's time index, read to index the chunk's rows)
                                                          -> starts again on every call
    state:     anything else (the recurrent state)        -> a Variable (lower/stateful.py)

A counter is the iteration number plus a constant: the iteration number of a Loop-5 starts
from 0 on every call, and so does a counter, as the rows it indexes are those of the chunk.
So time inside the loop is time within the chunk.

Refused (one line naming the loop, `refuse_unless_streamable`): a loop that scans in reverse
(an ONNX Scan with scan_input_directions or scan_output_directions 1, a reverse sliced input
or concatenated output), and one whose inputs are computed from a reversed value
(ReverseSequence, Reverse, a Slice or StridedSlice of negative step, a Gather at a descending
Range: a backward or bidirectional RNN, keras go_backwards, jax's flip): chunks arrive first to
last, so each would be reversed on its own, not the whole sequence. Refused too: a loop whose
steps (a sliced input, or an input whose row the body reads at the iteration number or a
counter) are computed by a window of several steps (a Convolution or pooling of a kernel
longer than 1: keras' causal Conv1D before a GRU): a chunk's first steps would read padding,
not the previous chunk's last steps, which no Variable keeps.
"""

from __future__ import annotations

import openvino as ov

from ov_loops.errors import ConversionError
from ov_loops.loopir.analysis import returned_unchanged, unchanged_carried
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.steps import Reverse
from ov_loops.ovgraph import constant_value, folded_value, upstream

UNCHANGED = "unchanged"
COUNTER = "counts iterations"
# Ops an index is computed through on its way from a Range to a Gather.
_INDEX_STEPS = frozenset({"Convert", "Squeeze", "Unsqueeze", "Reshape", "Concat", "Broadcast"})


def per_call(loop: LoopIR) -> dict[int, str]:
    """The positions in merged_inputs of the carried values that start from their outer value
    on every call (no Variable), and why: UNCHANGED or COUNTER (see the module)."""
    kept = {index: UNCHANGED for index in unchanged_carried(loop)}
    parts = {index for value in loop.carried if len(value.merged) > 1 for index in value.merged}
    for index in range(len(loop.spec.merged_inputs)):
        if index not in kept and index not in parts and _counts(loop, index):
            kept[index] = COUNTER
    return kept


def _counts(loop: LoopIR, index: int) -> bool:
    """Whether merged input `index` is a counter: an integer scalar whose outer value folds to
    a constant and whose back edge is Add(Parameter, Constant)."""
    merged = loop.spec.merged_inputs[index]
    parameter = loop.body.get_parameters()[merged.body_parameter]
    shape = parameter.get_output_partial_shape(0)
    if not parameter.get_element_type().is_integral_number() or shape.rank.is_dynamic:
        return False
    if shape.rank.get_length() > 1 or (shape.rank.get_length() == 1 and shape[0] != 1):
        return False
    step = returned_unchanged(loop.body_value(merged.body_result))
    if step.get_type_name() != "Add":
        return False
    terms = [returned_unchanged(step.input_value(k)) for k in (0, 1)]
    constant = [t for t in terms if t.get_type_name() == "Constant"]
    return (
        parameter in terms
        and len(constant) == 1
        and folded_value(loop.outer[merged.external_port]) is not None
    )


def refuse_unless_streamable(loop: LoopIR) -> None:
    """Raise ConversionError (one line) when `loop` scans in reverse, reads a reversed value or
    reads steps computed by a window of steps (see the module)."""
    spec = loop.spec
    reverse_inputs = [e for e in spec.sliced_inputs if e.stride < 0]
    reverse_outputs = [e for e in spec.concatenated_outputs if e.stride < 0]
    reverse_outputs += [r for r in loop.results if any(isinstance(s, Reverse) for s in r.after)]
    if reverse_inputs or reverse_outputs:
        what = "inputs" if reverse_inputs else "outputs"
        raise ConversionError(
            f"{loop.path}: --stateful: a {loop.op} that scans its {what} in reverse cannot "
            "stream (chunks arrive first to last, so each would be reversed on its own)"
        )
    reversal = next((n for n in upstream(loop.outer.values()) if _reverses(n)), None)
    if reversal is not None:
        raise ConversionError(
            f"{loop.path}: --stateful: the {loop.op} reads a reversed sequence "
            f"({reversal.get_type_name()} {reversal.get_friendly_name()}; a backward or "
            "bidirectional RNN) and cannot stream (chunks arrive first to last, so each "
            "would be reversed on its own)"
        )
    _refuse_windows(loop)


def _refuse_windows(loop: LoopIR) -> None:
    """Raise ConversionError when a step the loop reads is computed by a window of steps."""
    window = next((n for n in upstream(_step_inputs(loop)) if _window(n) > 1), None)
    if window is not None:
        raise ConversionError(
            f"{loop.path}: --stateful: the {loop.op} reads steps computed by "
            f"{window.get_type_name()} {window.get_friendly_name()} over windows of "
            f"{_window(window)} and cannot stream (a chunk's first steps would read padding, not "
            "the previous chunk's last steps)"
        )


def _step_inputs(loop: LoopIR) -> list[ov.Output]:
    """The outer values the loop reads one step at a time: its sliced inputs, and the inputs
    whose row the body gathers at the iteration number or a counter."""
    spec, parameters = loop.spec, loop.body.get_parameters()
    steps = [loop.outer[e.external_port] for e in spec.sliced_inputs]
    counters = [i for i, why in per_call(loop).items() if why == COUNTER]
    indices = {parameters[spec.merged_inputs[i].body_parameter].get_instance_id() for i in counters}
    if spec.current_iteration is not None:
        indices.add(parameters[spec.current_iteration].get_instance_id())
    by_parameter = {
        parameters[e.body_parameter].get_instance_id(): loop.outer[e.external_port]
        for e in (*spec.merged_inputs, *spec.invariant_inputs)
    }
    for node in loop.body.get_ordered_ops():
        if node.get_type_name() != "Gather":
            continue
        data = node.input_value(0).get_node().get_instance_id()
        if data in by_parameter and _step_index(node.input_value(1)) in indices:
            steps.append(by_parameter[data])
    return steps


def _step_index(index: ov.Output) -> int:
    """The instance id of the node `index` is computed from through shape and type steps."""
    node = index.get_node()
    while node.get_type_name() in _INDEX_STEPS:
        node = node.input_value(0).get_node()
    return node.get_instance_id()


def _window(node: ov.Node) -> int:
    """The longest window of a Convolution or pooling `node` along a spatial axis (1 for any
    other node, or one whose kernel is not known)."""
    kind = node.get_type_name()
    if kind in ("Convolution", "GroupConvolution"):
        shape = node.input_value(1).get_partial_shape()
        first = 2 if kind == "Convolution" else 3
        dims = [d.get_length() for d in list(shape)[first:] if d.is_static]
        return max(dims, default=1) if shape.rank.is_static else 1
    if kind in ("AvgPool", "MaxPool"):
        return max((int(k) for k in node.get_attributes().get("kernel", [])), default=1)
    return 1


def _reverses(node: ov.Node) -> bool:
    """Whether `node` reverses the order of a value's elements along an axis."""
    kind = node.get_type_name()
    if kind in ("ReverseSequence", "Reverse"):
        return True
    if kind in ("Slice", "StridedSlice") and node.get_input_size() > 3:
        steps = constant_value(node.input_value(3))
        return steps is not None and bool((steps < 0).any())
    if kind == "Gather":
        return _descending(node.input_value(1))
    return False


def _descending(indices: ov.Output) -> bool:
    """Whether `indices` is a Range of negative step, or a value minus a Range (jax's flip:
    Gather(x, (n - 1) - Range(0, n, 1))), through shape and type steps."""
    node = indices.get_node()
    while node.get_type_name() in _INDEX_STEPS:
        node = node.input_value(0).get_node()
    if node.get_type_name() == "Range":
        step = folded_value(node.input_value(2))
        return step is not None and bool((step < 0).all())
    if node.get_type_name() == "Subtract":
        subtracted = node.input_value(1).get_node()
        while subtracted.get_type_name() in _INDEX_STEPS:
            subtracted = subtracted.input_value(0).get_node()
        return subtracted.get_type_name() == "Range"
    return False
