"""Loop nodes read back from a model as they stand: every Loop node (`loop_nodes`) and its
LoopSpec (`spec_of`, the inverse of lower/loop5.build_loop), for re-deriving specs after
transformations that prune or renumber ports (the MOC simplification of bodies)."""

from __future__ import annotations

from collections.abc import Iterator

import openvino as ov

from ov_loops import ovgraph
from ov_loops.contract.spec import (
    TRIP_COUNT_CONSTANT,
    TRIP_COUNT_INPUT,
    TRIP_COUNT_UNBOUNDED,
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)


def spec_of(loop: ov.Node) -> LoopSpec:
    """The LoopSpec of an OpenVINO Loop node as it stands (the inverse of `build_loop`): for
    re-deriving specs after transformations that prune or renumber ports. The trip count is
    constant (or unbounded, -1) when input 0 comes straight from a Constant, as the IR reader
    reads it."""
    inputs = {"SliceInputDescription": [], "MergedInputDescription": [], "Invariant": []}
    for entry in loop.get_input_descriptions():
        kind = type(entry).__name__
        port, parameter = entry.input_index, entry.body_parameter_index
        if kind == "SliceInputDescription":
            slicing = _slicing(entry)
            inputs[kind].append(SlicedInput(port, parameter, **slicing))
        elif kind == "MergedInputDescription":
            inputs[kind].append(MergedInput(port, parameter, entry.body_value_index))
        else:
            inputs["Invariant"].append(InvariantInput(port, parameter))
    concatenated, last_values = [], []
    for entry in loop.get_output_descriptions():
        if type(entry).__name__ == "ConcatOutputDescription":
            slicing = _slicing(entry)
            concatenated.append(
                ConcatenatedOutput(entry.output_index, entry.body_value_index, **slicing)
            )
        else:
            last_values.append(LastValueOutput(entry.output_index, entry.body_value_index))
    current, condition = loop.get_special_body_ports()
    source, count = TRIP_COUNT_INPUT, None
    trip = ovgraph.constant_value(loop.input_value(0))
    if trip is not None and trip.size == 1:
        value = int(trip.reshape(-1)[0])
        source, count = (TRIP_COUNT_UNBOUNDED, None) if value < 0 else (TRIP_COUNT_CONSTANT, value)
    return LoopSpec(
        trip_count_source=source,
        trip_count=count,
        sliced_inputs=tuple(sorted(inputs["SliceInputDescription"], key=_port)),
        merged_inputs=tuple(sorted(inputs["MergedInputDescription"], key=_port)),
        invariant_inputs=tuple(sorted(inputs["Invariant"], key=_port)),
        concatenated_outputs=tuple(sorted(concatenated, key=_port)),
        last_value_outputs=tuple(sorted(last_values, key=_port)),
        current_iteration=None if current < 0 else current,
        execution_condition=None if condition < 0 else condition,
    )


def _slicing(entry) -> dict[str, int]:
    names = ("axis", "start", "stride", "part_size", "end")
    return {name: getattr(entry, name) for name in names}


def _port(entry) -> int:
    return entry.external_port


def loop_nodes(model: ov.Model) -> Iterator[ov.Node]:
    """Every Loop node in `model` and in the bodies of its Loops and Ifs, outer before inner."""
    return (op for op in ovgraph.all_ops(model) if op.get_type_name() == "Loop")
