"""LoopSpec: the one description of a loop shared by translator, IR reader and reference.

Ports follow Loop-5 numbering: `external_port` of an input is the Loop's input index (0 is the
trip count, 1 the initial execution condition, so port_map inputs start at 2); `external_port`
of an output is the Loop's output index. Body ports are indices into the body's Parameters and
Results, in body order.

Loop-5 semantics (OpenVINO Loop-5 spec, "Detailed description"; ../shared/specs)::

    i, keepgoing = 0, initial_condition                 # inputs 0 and 1
    params[invariant] = value; params[merged] = initial value
    while (trip_count < 0 or i < trip_count) and keepgoing:
        params[sliced] = input[start + i*stride : ... + part_size] along axis  # stride<0: from end
        params[current_iteration] = i                   # if the special port is set
        results = body(params)
        keepgoing = results[execution_condition]        # if the special port is set
        params[merged.body_parameter] = results[merged.body_result]           # back edges
        parts[concatenated] += [results[concatenated.body_result]]
        i += 1
    outputs: last values (results after the last iteration) and the parts of each
             concatenated output joined along its axis (in reverse order for stride < 0)

After zero iterations a last value is undefined by the spec: ov-loops' IR reference takes the
initial value of the merged input whose back edge the output reads, and the translator guards
the CPU plugin's outputs to that (see loopir/passes/zero_run_guards.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ov_loops.errors import ConversionError

TRIP_COUNT_CONSTANT = "constant"
TRIP_COUNT_INPUT = "input"
TRIP_COUNT_UNBOUNDED = "unbounded"
TRIP_COUNT_SOURCES = (TRIP_COUNT_CONSTANT, TRIP_COUNT_INPUT, TRIP_COUNT_UNBOUNDED)


class SpecError(ConversionError):
    """A LoopSpec that breaks an invariant of Loop-5 (see LoopSpec.check)."""


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

    def inputs(self) -> list[SlicedInput | MergedInput | InvariantInput]:
        """The port_map inputs in external port order."""
        entries = (*self.sliced_inputs, *self.merged_inputs, *self.invariant_inputs)
        return sorted(entries, key=lambda entry: entry.external_port)

    def outputs(self) -> list[ConcatenatedOutput | LastValueOutput]:
        """The port_map outputs in external port order."""
        entries = (*self.concatenated_outputs, *self.last_value_outputs)
        return sorted(entries, key=lambda entry: entry.external_port)

    def check(
        self,
        parameters: int | None = None,
        results: int | None = None,
        require_condition: bool = False,
    ) -> None:
        """Raise SpecError naming the first broken invariant::

            [e.external_port for e in inputs()] == [2, 3, ..., n]      # contiguous
            [e.external_port for e in outputs()] == [0, 1, ..., m]
            every body Parameter fed once: by one port_map input or current_iteration
            current_iteration is not also a port_map input's body_parameter
            part_size == abs(stride) != 0 and axis >= 0 for sliced and concatenated entries
            (trip_count is not None) == (trip_count_source == "constant"); trip_count >= 0
            execution_condition is set, when `require_condition`

        `parameters` and `results` are the body's counts, when known: every body index must be
        below them, and with `parameters` every Parameter must be fed.
        """
        problem = _first_problem(self, parameters, results, require_condition)
        if problem is not None:
            raise SpecError(f"LoopSpec: {problem}")


def _first_problem(
    spec: LoopSpec, parameters: int | None, results: int | None, require_condition: bool
) -> str | None:
    checks = (
        _port_problem(spec),
        _parameter_problem(spec, parameters),
        _result_problem(spec, results),
        _slicing_problem(spec),
        _trip_count_problem(spec),
    )
    problem = next((found for found in checks if found is not None), None)
    if problem is None and require_condition and spec.execution_condition is None:
        problem = "no execution_condition (Loop-5 needs a condition Result before lowering)"
    return problem


def _port_problem(spec: LoopSpec) -> str | None:
    inputs = [entry.external_port for entry in spec.inputs()]
    if inputs != list(range(2, 2 + len(inputs))):
        return f"port_map input ports {inputs} are not 2..{1 + len(inputs)}"
    outputs = [entry.external_port for entry in spec.outputs()]
    if outputs != list(range(len(outputs))):
        return f"output ports {outputs} are not 0..{len(outputs) - 1}"
    return None


def _parameter_problem(spec: LoopSpec, parameters: int | None) -> str | None:
    fed = [entry.body_parameter for entry in spec.inputs()]
    if spec.current_iteration is not None:
        if spec.current_iteration in fed:
            return f"current_iteration {spec.current_iteration} is also a port_map input"
        fed.append(spec.current_iteration)
    twice = sorted({index for index in fed if fed.count(index) > 1})
    if twice:
        return f"body Parameter(s) {twice} fed more than once"
    if any(index < 0 for index in fed):
        return f"negative body Parameter index in {sorted(fed)}"
    if parameters is not None and sorted(fed) != list(range(parameters)):
        missing = sorted(set(range(parameters)) - set(fed))
        extra = sorted(set(fed) - set(range(parameters)))
        return f"body Parameters not fed: {missing}; indices past the body's: {extra}"
    return None


def _result_problem(spec: LoopSpec, results: int | None) -> str | None:
    used = [entry.body_result for entry in (*spec.merged_inputs, *spec.outputs())]
    if spec.execution_condition is not None:
        used.append(spec.execution_condition)
    if any(index < 0 or (results is not None and index >= results) for index in used):
        return f"body Result index out of range in {sorted(set(used))} (body has {results})"
    return None


def _slicing_problem(spec: LoopSpec) -> str | None:
    for entry in (*spec.sliced_inputs, *spec.concatenated_outputs):
        if entry.stride == 0 or entry.part_size != abs(entry.stride):
            return f"{entry}: part_size must be |stride| != 0"
        if entry.axis < 0:
            return f"{entry}: negative axis"
    return None


def _trip_count_problem(spec: LoopSpec) -> str | None:
    if spec.trip_count_source not in TRIP_COUNT_SOURCES:
        return f"unknown trip_count_source {spec.trip_count_source!r}"
    constant = spec.trip_count_source == TRIP_COUNT_CONSTANT
    if constant != (spec.trip_count is not None):
        return f"trip_count {spec.trip_count} with source {spec.trip_count_source!r}"
    if constant and spec.trip_count < 0:
        return f"negative constant trip_count {spec.trip_count}"
    return None
