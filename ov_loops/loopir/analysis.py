"""Analyses of a LoopIR that passes and lowerings share: which body Parameters are read,
whether a loop is computed from constants alone, which carried values the body returns
unchanged."""

from __future__ import annotations

from collections.abc import Iterable

import openvino as ov

from ov_loops.contract.spec import InvariantInput, MergedInput, SlicedInput
from ov_loops.loopir.loop import LoopIR

# Ops whose values the CPU plugin never treats as constant (ConstantType::StrictNoConst).
RUNTIME_SOURCES = frozenset({"Parameter", "ReadValue", "RandomUniform"})


def computes_from_constants(loop: LoopIR, shapes: bool = False) -> bool:
    """Whether the trip count, the initial condition and every outer value the body really
    reads (`read_parameters`) are computed from Constants alone (with `shapes`, from Constants
    and the shapes of any values: constants once the model's shapes are static).

    Asked value by value, so the body is walked only for a Parameter whose outer value is not
    computed from constants, and only forward from it (`is_read`): an unrolled body is k
    copies long, and most loops read a run-time value."""
    if not computed_from_constants([loop.trip.value, loop.start.value], shapes):
        return False
    parameters = loop.body.get_parameters()
    return not any(
        not computed_from_constants([loop.outer[entry.external_port]], shapes)
        and is_read(loop.body, parameters[entry.body_parameter])
        for entry in loop.spec.inputs()
    )


def is_read(model: ov.Model, parameter: ov.Node) -> bool:
    """Whether `parameter` is among `read_parameters(model)`: found forward from it, a Result
    reached through ops that read all their inputs decides at once; a walk that meets an If
    (which reads only some of its inputs) asks `read_parameters`."""
    seen = {parameter.get_instance_id()}
    pending = [parameter]
    while pending:
        node = pending.pop()
        for output in node.outputs():
            for target in output.get_target_inputs():
                reader = target.get_node()
                kind = reader.get_type_name()
                if kind == "Result":
                    return True
                if kind == "If":
                    return parameter.get_instance_id() in read_parameters(model)
                if reader.get_instance_id() not in seen:
                    seen.add(reader.get_instance_id())
                    pending.append(reader)
    return False


def read_parameters(model: ov.Model, values: list[ov.Output] | None = None) -> set[int]:
    """The instance ids of the Parameters of `model` that `values` (by default its Results)
    depend on; through an If only the branch Results of the outputs used, and the data inputs
    whose Parameters they read (OpenVINO drops the other outputs and inputs)."""
    if values is None:
        values = [result.input_value(0) for result in model.get_results()]
    seen: set[tuple[int, int]] = set()
    read: set[int] = set()
    pending = list(values)
    while pending:
        value = pending.pop()
        node = value.get_node()
        if (node.get_instance_id(), value.get_index()) in seen:
            continue
        seen.add((node.get_instance_id(), value.get_index()))
        if node.get_type_name() == "Parameter":
            read.add(node.get_instance_id())
        pending.extend(_read_inputs(value))
    return read


def _read_inputs(value: ov.Output) -> list[ov.Output]:
    """The inputs the node of `value` reads to compute it: all of them, but for an If its
    condition and the data inputs whose Parameters the branch Results of `value` read."""
    node = value.get_node()
    if node.get_type_name() != "If":
        return list(node.input_values())
    indices = {0}
    for branch in (0, 1):
        body = node.get_function(branch)
        results = [
            body.get_results()[entry.body_value_index].input_value(0)
            for entry in node.get_output_descriptions(branch)
            if entry.output_index == value.get_index()
        ]
        read, parameters = read_parameters(body, results), body.get_parameters()
        for entry in node.get_input_descriptions(branch):
            if parameters[entry.body_parameter_index].get_instance_id() in read:
                indices.add(entry.input_index)
    return [node.input_value(index) for index in sorted(indices)]


def computed_from_constants(values: Iterable[ov.Output], shapes: bool = False) -> bool:
    """Whether `values` are computed from Constants alone: no Parameter, ReadValue or
    RandomUniform (RUNTIME_SOURCES) upstream of any of them (with `shapes`, the walk stops at
    ShapeOf: a shape counts as a constant). Breadth first, so a source near the values ends the
    walk: loops in a chain each reading a Parameter would otherwise walk back through every
    loop before them (quadratic in their number)."""
    seen: set[int] = set()
    layer = [value.get_node() for value in values]
    while layer:
        if any(node.get_type_name() in RUNTIME_SOURCES for node in layer):
            return False
        seen.update(node.get_instance_id() for node in layer)
        following = {}
        for node in layer:
            if shapes and node.get_type_name() == "ShapeOf":
                continue
            for value in node.input_values():
                source = value.get_node()
                if source.get_instance_id() not in seen:
                    following[source.get_instance_id()] = source
        layer = list(following.values())
    return True


def unread_parameters(
    loop: LoopIR, entries: Iterable[InvariantInput | SlicedInput | MergedInput]
) -> set[int]:
    """The body Parameters of `entries` that no node of the body reads."""
    in_body = {node.get_instance_id() for node in loop.body.get_ordered_ops()}
    parameters = loop.body.get_parameters()
    return {
        entry.body_parameter
        for entry in entries
        if not any(
            reader.get_node().get_instance_id() in in_body
            for reader in parameters[entry.body_parameter].output(0).get_target_inputs()
        )
    }


def returned_unchanged(value: ov.Output) -> ov.Node:
    """The node whose output `value` is, through Identity ops and Converts to the same type."""
    node = value.get_node()
    while node.get_type_name() == "Identity" or (
        node.get_type_name() == "Convert"
        and node.get_input_element_type(0) == node.get_output_element_type(0)
    ):
        node = node.input_value(0).get_node()
    return node


def unchanged_carried(loop: LoopIR) -> set[int]:
    """The positions in merged_inputs of back edges that return their own Parameter unchanged,
    whole carried values only."""
    parameters = loop.body.get_parameters()
    returned = returned_unchanged
    unchanged = {
        index
        for index, entry in enumerate(loop.spec.merged_inputs)
        if returned(loop.body_value(entry.body_result)) == parameters[entry.body_parameter]
    }
    for value in loop.carried:
        if not unchanged.issuperset(value.merged):
            unchanged -= set(value.merged)
    return unchanged
