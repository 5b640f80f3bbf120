"""LoopSpec: the one description of a loop shared by translator, IR reader and reference.

Ports follow Loop-5 numbering: `external_port` of an input is the Loop's input index (0 is the
trip count, 1 the initial execution condition, so port_map inputs start at 2); `external_port`
of an output is the Loop's output index. Body ports are indices into the body's Parameters and
Results, in body order.
"""

from __future__ import annotations

from dataclasses import dataclass

TRIP_COUNT_CONSTANT = "constant"
TRIP_COUNT_INPUT = "input"
TRIP_COUNT_UNBOUNDED = "unbounded"


@dataclass(frozen=True)
class SlicedInput:
    """Each iteration reads part `i` of the external tensor along `axis`."""

    external_port: int
    body_parameter: int
    axis: int
    start: int = 0
    stride: int = 1
    part_size: int = 1
    end: int = -1


@dataclass(frozen=True)
class MergedInput:
    """Initial value from outside, then the value of `body_result` (the back edge)."""

    external_port: int
    body_parameter: int
    body_result: int


@dataclass(frozen=True)
class InvariantInput:
    """The same external value in every iteration."""

    external_port: int
    body_parameter: int


@dataclass(frozen=True)
class ConcatenatedOutput:
    """The per-iteration values of `body_result` joined along `axis`."""

    external_port: int
    body_result: int
    axis: int
    start: int = 0
    stride: int = 1
    part_size: int = 1
    end: int = -1


@dataclass(frozen=True)
class LastValueOutput:
    """The value of `body_result` after the last iteration."""

    external_port: int
    body_result: int


@dataclass(frozen=True)
class LoopSpec:
    """A Loop-5 layer's port map, back edges and special ports, independent of any backend."""

    trip_count_source: str
    trip_count: int | None = None
    sliced_inputs: tuple[SlicedInput, ...] = ()
    merged_inputs: tuple[MergedInput, ...] = ()
    invariant_inputs: tuple[InvariantInput, ...] = ()
    concatenated_outputs: tuple[ConcatenatedOutput, ...] = ()
    last_value_outputs: tuple[LastValueOutput, ...] = ()
    current_iteration: int | None = None
    execution_condition: int | None = None

    def special_ports(self) -> list[str]:
        ports = []
        if self.current_iteration is not None:
            ports.append("current_iteration")
        if self.execution_condition is not None:
            ports.append("execution_condition")
        return ports

    def summary(self) -> str:
        """One line: trip-count source, input and output counts, special ports."""
        trip = self.trip_count_source
        if self.trip_count_source == TRIP_COUNT_CONSTANT:
            trip = f"constant {self.trip_count}"
        special = ", ".join(self.special_ports()) or "none"
        return (
            f"trip count {trip}; inputs: {len(self.sliced_inputs)} sliced, "
            f"{len(self.merged_inputs)} merged, {len(self.invariant_inputs)} invariant; "
            f"outputs: {len(self.concatenated_outputs)} concatenated, "
            f"{len(self.last_value_outputs)} last-value; special ports: {special}"
        )
