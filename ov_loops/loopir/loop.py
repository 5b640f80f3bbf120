"""LoopIR: one loop between its frontend and its lowering.

A frontend (ONNX Loop, Scan-9+, the Scan-8 batch loop, the Theano-style builder) builds a LoopIR
whose body is already in Loop-5 form (sliced parts keep their length-1 axis, per-iteration
values of concatenated outputs have it, an execution-condition Result exists); passes
(loopir/passes) take and return LoopIRs; a lowering (lower/) turns one into graph values.
After a LoopIR exists nothing reads ONNX protos or builder internals.

The body `ov.Model` is owned by the newest LoopIR: a pass may rewrite its graph in place and
returns the LoopIR that describes it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract import ports
from ov_loops.contract.kinds import CarriedValue
from ov_loops.contract.spec import TRIP_COUNT_CONSTANT, LoopSpec, SpecError
from ov_loops.loopir.steps import Step
from ov_loops.loopir.trip_count import InitialCondition, TripCount
from ov_loops.record import Record


class LoopResult(Record):
    """One value the loop gives its graph: Loop-5 output `port`, then the post-loop `after`
    steps in order. `initial` is its value when the loop runs zero times, if that is an outer
    value (a carried value's initial value); `empty_shape` the shape of a concatenated output
    after zero iterations, when the frontend knows it better than the body's static dims."""

    __slots__ = ("port", "initial", "empty_shape", "after")

    def __init__(
        self,
        port: int,
        initial: ov.Output | None = None,
        empty_shape: ov.Output | None = None,
        after: tuple[Step, ...] = (),
    ) -> None:
        self.port = port
        self.initial = initial
        self.empty_shape = empty_shape
        self.after = after

    def with_step(self, step: Step) -> LoopResult:
        """This result with `step` among its post-loop steps, in the steps' phase order."""
        steps = sorted((*self.after, step), key=lambda existing: existing.phase)
        return self.replace(after=tuple(steps))


class Fallback(Record):
    """The loop a pass replaced by a computation that holds only on some inputs: the lowering
    runs `loop` instead (a Loop-5 in an If, lower/fallback.py) when the replacement's output
    port `safe_port`, a boolean, is false. Its output ports mean what the replacement's do."""

    __slots__ = ("loop", "safe_port")

    def __init__(self, loop: LoopIR, safe_port: int) -> None:
        self.loop = loop
        self.safe_port = safe_port


class LoopIR(Record):
    """A loop: node path, op, LoopSpec, body, the outer value of every port_map input (by
    external port), trip count and initial condition, logical carried values, and the values it
    gives its graph (in the frontend's output order); `applied` says what optimisations did
    to it, one phrase each ("hoisted 2 MatMul"); `zero_run_branch`: its run of no iteration is
    taken outside the Loop-5, by an If around it (passes/zero_run_carry.py), so the Loop-5
    itself runs at least once; `fallback`: the loop it replaces, run instead when its
    computation does not hold (passes/linear_recurrences.py); `in_main_graph` whether it is
    a node of the main graph (--stateful keeps such loops' states), `in_loop_body` of a
    loop's body; `not_unrolled` why
    unroll-iterations left it whole when the report says so (its share of the op budget)."""

    __slots__ = (
        "path",
        "op",
        "spec",
        "body",
        "outer",
        "trip",
        "start",
        "carried",
        "results",
        "applied",
        "zero_run_branch",
        "fallback",
        "in_main_graph",
        "in_loop_body",
        "iterations_per_step",
        "not_unrolled",
        "_checked",
    )

    def __init__(
        self,
        path: str,
        op: str,
        spec: LoopSpec,
        body: ov.Model,
        outer: Mapping[int, ov.Output],
        trip: TripCount,
        start: InitialCondition,
        carried: tuple[CarriedValue, ...],
        results: tuple[LoopResult, ...],
        applied: tuple[str, ...] = (),
        zero_run_branch: bool = False,
        fallback: Fallback | None = None,
        in_main_graph: bool = True,
        in_loop_body: bool = False,
        iterations_per_step: int = 1,
        not_unrolled: str | None = None,
    ) -> None:
        self.path = path
        self.op = op
        self.spec = spec
        self.body = body
        self.outer = outer
        self.trip = trip
        self.start = start
        self.carried = carried
        self.results = results
        self.applied = applied
        self.zero_run_branch = zero_run_branch
        self.fallback = fallback
        # a node of the main graph itself, not of a body or If branch
        self.in_main_graph = in_main_graph
        # a node of a loop's body (at any depth, If branches in it too): that loop's simplify-body
        # runs MOC on a body holding this one (passes/simplify.py)
        self.in_loop_body = in_loop_body
        # how many iterations of the loop as its frontend made it one Loop-5 iteration runs (k once
        # unrolled by k); `check` maps the Loop-5's iterations back (lower/loop5.py marks it)
        self.iterations_per_step = iterations_per_step
        self.not_unrolled = not_unrolled  # why level max left it whole, when worth a report
        # The body's (Parameter, Result) counts when check() last passed: all else it reads is
        # unchanged, so a pipeline checking one LoopIR before and after each pass checks it once.
        self._checked: tuple[int, int] | None = None

    @property
    def may_run_zero(self) -> bool:
        """Whether a runtime trip count or initial condition may stop it before iteration 0."""
        return self.trip.runtime or self.start.runtime

    @property
    def runs_zero_times(self) -> bool:
        """Whether it provably runs no iteration (a constant trip count 0 or a false start)."""
        return self.trip.proven_zero or self.start.constant is False

    def body_value(self, result: int) -> ov.Output:
        """The value body Result `result` returns."""
        return self.body.get_results()[result].input_value(0)

    def check(self) -> None:
        """Raise SpecError unless: the spec holds for this body (LoopSpec.check, with an
        execution condition); every port_map input has an outer value and nothing else does;
        every result reads an output port; carried values name existing merged inputs; the
        spec's constant trip count is the trip count's."""
        counts = (len(self.body.get_parameters()), self.body.get_output_size())
        if counts == self._checked:
            return
        spec = self.spec
        spec.check(*counts, True)
        problems = []
        ports_in = {entry.external_port for entry in spec.inputs()}
        if set(self.outer) != ports_in:
            problems.append(f"outer values for ports {sorted(self.outer)}, inputs {ports_in}")
        outputs = len(spec.outputs())
        if any(not 0 <= result.port < outputs for result in self.results):
            problems.append(f"a result reads a port outside 0..{outputs - 1}")
        used = [index for value in self.carried for index in value.merged]
        if any(not 0 <= index < len(spec.merged_inputs) for index in used):
            problems.append(f"carried values name merged inputs {used}")
        constant = self.trip.constant if spec.trip_count_source == TRIP_COUNT_CONSTANT else None
        if spec.trip_count != constant:
            problems.append(f"spec trip count {spec.trip_count}, trip count {self.trip.constant}")
        if problems:
            raise SpecError(f"{self.path}: LoopIR: " + "; ".join(problems))
        self._checked = counts  # a memo, not a field

    def with_trip_count(self, count: int) -> LoopIR:
        """This loop with the constant trip count `count` (its spec's too)."""
        value = ops.constant(np.int64(count)).output(0)
        trip = TripCount(value, TRIP_COUNT_CONSTANT, count, False)
        spec = dataclasses.replace(
            self.spec, trip_count_source=TRIP_COUNT_CONSTANT, trip_count=count
        )
        return self.replace(trip=trip, spec=spec)

    def noting(self, what: str) -> LoopIR:
        """This loop with `what` (an optimisation that changed it) among `applied`."""
        return self.replace(applied=(*self.applied, what))

    def replace(self, **changes) -> LoopIR:
        """A copy with `changes` (as dataclasses.replace, which took a tenth of a pass's
        time: here the fields are copied, not passed through __init__), not yet checked."""
        unknown = changes.keys() - _FIELDS
        if unknown:
            raise TypeError(f"LoopIR has no fields {sorted(unknown)}")
        copy = object.__new__(LoopIR)
        for name in self._fields:
            setattr(copy, name, changes[name] if name in changes else getattr(self, name))
        copy._checked = None
        return copy

    def with_body(self, results: list, parameters: list, spec: LoopSpec | None = None) -> LoopIR:
        """This loop with a body made of `results` and `parameters` (and `spec`, if given)."""
        body = ov.Model(results, parameters, self.body.get_friendly_name())
        return self.replace(body=body, spec=spec or self.spec)

    def without_parameters(self, dropped: set[int]) -> LoopIR:
        """This loop after the body Parameters at `dropped` lost their uses: they and the inputs
        feeding them are removed, ports renumbered, outer values moved with their inputs."""
        parameters = self.body.get_parameters()
        spec = ports.without_parameters(self.spec, dropped)
        by_parameter = {e.body_parameter: self.outer[e.external_port] for e in self.spec.inputs()}
        kept = [index for index in range(len(parameters)) if index not in dropped]
        outer = {
            entry.external_port: by_parameter[kept[entry.body_parameter]] for entry in spec.inputs()
        }
        body = self.with_body(list(self.body.get_results()), [parameters[i] for i in kept], spec)
        return body.replace(outer=outer)


_FIELDS = frozenset(LoopIR._fields)
