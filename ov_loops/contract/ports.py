"""Port allocation: the one place that numbers a LoopSpec's ports.

Frontends list the port_map entries by role, in the order the ports should have; `number_ports`
gives inputs 2, 3, ... and outputs 0, 1, ... in that order. Passes that drop a body Parameter or
add a Result keep the numbering contiguous through `without_parameters` and `with_outputs`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from ov_loops.contract.spec import (
    TRIP_COUNT_CONSTANT,
    ConcatenatedOutput,
    InvariantInput,
    LastValueOutput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)

InputEntry = SlicedInput | MergedInput | InvariantInput
OutputEntry = ConcatenatedOutput | LastValueOutput
UNNUMBERED = -1  # the external_port of an entry before `number_ports`


def number_ports(
    inputs: Sequence[InputEntry],
    outputs: Sequence[OutputEntry],
    trip_count_source: str,
    trip_count: int | None = None,
    current_iteration: int | None = None,
    execution_condition: int | None = None,
) -> LoopSpec:
    """The LoopSpec whose port_map inputs are `inputs` numbered 2, 3, ... and whose outputs are
    `outputs` numbered 0, 1, ..., in the order given (their `external_port`s are ignored).
    `trip_count` is kept only for a constant source."""
    numbered_inputs = [_at_port(entry, port) for port, entry in enumerate(inputs, 2)]
    numbered_outputs = [_at_port(entry, port) for port, entry in enumerate(outputs)]
    return LoopSpec(
        trip_count_source=trip_count_source,
        trip_count=trip_count if trip_count_source == TRIP_COUNT_CONSTANT else None,
        sliced_inputs=_of_kind(numbered_inputs, SlicedInput),
        merged_inputs=_of_kind(numbered_inputs, MergedInput),
        invariant_inputs=_of_kind(numbered_inputs, InvariantInput),
        concatenated_outputs=_of_kind(numbered_outputs, ConcatenatedOutput),
        last_value_outputs=_of_kind(numbered_outputs, LastValueOutput),
        current_iteration=current_iteration,
        execution_condition=execution_condition,
    )


def _at_port(entry, port: int):
    """`entry` with `external_port` = `port`: dataclasses.replace's copy without its field scan
    and __init__ (entries have no __post_init__; this runs for every port of every loop)."""
    if entry.external_port == port:
        return entry  # frozen: shared as it is
    moved = object.__new__(type(entry))
    moved.__dict__.update(entry.__dict__, external_port=port)
    return moved


def _of_kind(entries: Iterable, kind: type) -> tuple:
    return tuple(entry for entry in entries if isinstance(entry, kind))


def renumbered(spec: LoopSpec, inputs: Sequence[InputEntry], outputs: Sequence[OutputEntry]):
    """`spec` with these port_map entries (in port order), its special ports and trip count kept."""
    return number_ports(
        inputs,
        outputs,
        spec.trip_count_source,
        spec.trip_count,
        spec.current_iteration,
        spec.execution_condition,
    )


def without_parameters(spec: LoopSpec, dropped: set[int]) -> LoopSpec:
    """`spec` after the body Parameters at the indices `dropped` were removed from the body:
    the inputs feeding them are gone, later Parameters move down, ports stay contiguous.
    (current_iteration may not be dropped.)"""

    def moved(index: int) -> int:
        return index - sum(1 for gone in dropped if gone < index)

    if spec.current_iteration in dropped:
        raise ValueError(f"current_iteration (body Parameter {spec.current_iteration}) dropped")
    kept = [
        dataclasses.replace(entry, body_parameter=moved(entry.body_parameter))
        for entry in spec.inputs()
        if entry.body_parameter not in dropped
    ]
    current = None if spec.current_iteration is None else moved(spec.current_iteration)
    return dataclasses.replace(renumbered(spec, kept, spec.outputs()), current_iteration=current)


def with_outputs(spec: LoopSpec, added: Sequence[OutputEntry]) -> LoopSpec:
    """`spec` with `added` outputs after its own (numbered on from the last port)."""
    return renumbered(spec, spec.inputs(), [*spec.outputs(), *added])
