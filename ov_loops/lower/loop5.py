"""Lowering: a LoopIR -> an OpenVINO Loop-5 node and its post-loop steps."""

from __future__ import annotations

from collections.abc import Mapping

import openvino as ov
import openvino.opset15 as ops
from openvino.op.util import (
    BodyOutputDescription,
    ConcatOutputDescription,
    InvariantInputDescription,
    MergedInputDescription,
    SliceInputDescription,
)

from ov_loops.contract.kinds import CARRIED_MARK, STEP_MARK, TENSOR, mark
from ov_loops.contract.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)
from ov_loops.errors import ConversionError
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.plugin_limits import MAX_PORT_RANK
from ov_loops.loopir.steps import AfterLoop, apply_steps

# The `ov_loops_path` of a split loop's second Loop-5 (lower/remainder.py): the first's and this.
REMAINDER = "/remainder"


def lower_to_loop5(loop: LoopIR, starts_true: bool = False) -> list[ov.Output]:
    """The Loop-5 for `loop` (in an If that takes its runs of no iteration when
    `loop.zero_run_branch`: zero_run_branch.py), then each result's post-loop steps; the values
    in result order (taken from the loop it replaced when its safe flag is false:
    fallback.py). An unrolled loop's body says in its rt_info how many of the loop's
    iterations one Loop-5 iteration runs (STEP_MARK), which `check`'s probes read.

    `starts_true` (a target needing static loops): a run-time initial condition is not the
    Loop-5's, which starts true; the results' zero-iteration guards (GuardZeroIterationRuns,
    from the initial condition) give the values of a run of no iteration when it is false::

        outputs = Loop-5(trip, True, ...)         # runs whatever the initial condition
        result  = initial if not start else outputs[result]   # empty when stacked
    """
    loop.check()
    start = loop.start.value
    if starts_true and loop.start.runtime and not loop.zero_run_branch:
        start = ops.constant(True).output(0)
    if loop.zero_run_branch:  # these two are imported when a loop needs them (select.py)
        from ov_loops.lower.zero_run_branch import build_loop_in_if

        outputs = build_loop_in_if(loop, build_loop)
    else:
        outputs = build_loop(loop.spec, loop.body, loop.trip.value, start, loop.outer, loop.path)
    if loop.fallback is not None:
        from ov_loops.lower.fallback import fall_back

        outputs = fall_back(loop, outputs, build_loop)
    mark_carried_kinds(loop)
    if loop.iterations_per_step > 1:
        loop.body.set_rt_info(loop.iterations_per_step, STEP_MARK)
    return apply_steps(loop.results, AfterLoop(outputs, loop.trip, loop.start))


def mark_carried_kinds(loop: LoopIR) -> None:
    """Mark in the body's rt_info, which the IR keeps, the kind and part of each merged body
    Parameter that carries a part of a value that is not a tensor (contract/kinds.py:
    CARRIED_MARK), so that `check` of the IR compares the value whole."""
    parameters = loop.body.get_parameters()
    for value in loop.carried:
        if value.kind == TENSOR:
            continue
        for part, index in enumerate(value.merged):
            parameter = parameters[loop.spec.merged_inputs[index].body_parameter]
            name = parameter.get_friendly_name()
            loop.body.set_rt_info(mark((value.kind, part)), [CARRIED_MARK, name])


def build_loop(
    spec: LoopSpec,
    body: ov.Model,
    trip_count: ov.Output,
    condition: ov.Output,
    external_inputs: Mapping[int, ov.Output],
    name: str,
) -> list[ov.Output]:
    """Emit a Loop-5 for `spec`; return its outputs in external_port order. ConversionError
    for ports of rank above MAX_PORT_RANK. `external_inputs` maps each port_map input's
    external_port (2, 3, ...) to its outer value. `name` (the ONNX node path) is also kept in
    the Loop's rt_info as `ov_loops_path`, which the IR keeps too.

    The port map is set whole (`set_input_descriptions`, `set_output_descriptions`) and the
    Loop validated once: each of OpenVINO's set_invariant_input, set_merged_input, ...,
    get_iter_value validates the Loop, its body and every body nested in it again, which made
    the build of an outer Loop of a nest cost its ports times its nested bodies' size.
    """
    loop = ops.loop(trip_count, condition)
    loop.set_friendly_name(name)
    loop.get_rt_info()["ov_loops_path"] = name
    loop.set_function(body)
    current = -1 if spec.current_iteration is None else spec.current_iteration
    condition_result = -1 if spec.execution_condition is None else spec.execution_condition
    loop.set_special_body_ports([current, condition_result])
    arguments, descriptions = _input_descriptions(spec, external_inputs)
    loop.set_arguments([trip_count, condition, *arguments])
    loop.set_input_descriptions(descriptions)
    outputs, produced = _output_descriptions(spec)
    loop.set_output_descriptions(outputs)
    loop.set_output_size(len(outputs))
    loop.validate_and_infer_types()
    _refuse_high_rank_ports(loop, name)
    return [loop.output(index) for index in produced]


def _input_descriptions(
    spec: LoopSpec, external_inputs: Mapping[int, ov.Output]
) -> tuple[list[ov.Output], list]:
    """The Loop's inputs from 2 on (its port_map inputs' outer values) and their descriptions,
    as OpenVINO's set_sliced_input, set_merged_input and set_invariant_input make them."""
    inputs = sorted(
        (*spec.sliced_inputs, *spec.merged_inputs, *spec.invariant_inputs),
        key=lambda entry: entry.external_port,
    )
    arguments, descriptions = [], []
    for port, entry in enumerate(inputs, start=2):
        assert entry.external_port == port, f"port_map inputs must be 2..n, got {entry}"
        arguments.append(external_inputs[port])
        if isinstance(entry, SlicedInput):
            described = SliceInputDescription(
                port,
                entry.body_parameter,
                entry.start,
                entry.stride,
                entry.part_size,
                entry.end,
                entry.axis,
            )
        elif isinstance(entry, MergedInput):
            described = MergedInputDescription(port, entry.body_parameter, entry.body_result)
        else:
            assert isinstance(entry, InvariantInput)
            described = InvariantInputDescription(port, entry.body_parameter)
        descriptions.append(described)
    return arguments, descriptions


def _output_descriptions(spec: LoopSpec) -> tuple[list, list[int]]:
    """The descriptions of the Loop's outputs, one per stacked slice and one per body Result
    read as a last value (as OpenVINO's get_concatenated_slices and get_iter_value make them),
    and the Loop output of each port_map output in external_port order. One Loop output per
    body Result: two outputs of one Result crash the CPU plugin when that Result is a body
    Parameter (docs/pitfalls.md)."""
    entries = sorted(
        (*spec.concatenated_outputs, *spec.last_value_outputs),
        key=lambda entry: entry.external_port,
    )
    descriptions, produced, last_values = [], [], {}
    for port, entry in enumerate(entries):
        assert entry.external_port == port, f"outputs must be 0..n, got {entry}"
        index = len(descriptions)
        if isinstance(entry, ConcatenatedOutput):
            descriptions.append(
                ConcatOutputDescription(
                    entry.body_result,
                    index,
                    entry.start,
                    entry.stride,
                    entry.part_size,
                    entry.end,
                    entry.axis,
                )
            )
        elif entry.body_result not in last_values:
            last_values[entry.body_result] = index
            descriptions.append(BodyOutputDescription(entry.body_result, index, -1))
        else:
            index = last_values[entry.body_result]
        produced.append(index)
    return descriptions, produced


def _refuse_high_rank_ports(loop: ov.Node, name: str) -> None:
    """Raise a ConversionError naming the first port the CPU plugin cannot run: a rank above
    MAX_PORT_RANK (SIGFPE) or a dynamic rank (refused at compile: "CPU plug-in doesn't support
    Loop operation with dynamic rank"), e.g. a loop-carried value whose rank changes between
    iterations, or a body input declared with another rank than the value the loop feeds it."""
    ports = [(f"input {i}", value) for i, value in enumerate(loop.input_values())]
    ports += [(f"output {i}", output) for i, output in enumerate(loop.outputs())]
    for port, value in ports:
        rank = value.get_partial_shape().rank
        if rank.is_static and rank.get_length() <= MAX_PORT_RANK:
            continue
        names = sorted(value.get_names())
        what = f"{port} ('{names[0]}')" if names else port
        if rank.is_dynamic:
            raise ConversionError(
                f"{name}: Loop-5 {what} has a dynamic rank (its rank is not the same on every "
                "iteration, or differs from what the body declares); OpenVINO's CPU plugin "
                "cannot compile Loops with such ports"
            )
        if rank.get_length() > MAX_PORT_RANK:
            raise ConversionError(
                f"{name}: Loop-5 {what} has rank {rank.get_length()}; OpenVINO's CPU plugin "
                f"crashes (SIGFPE) on Loop ports of rank above {MAX_PORT_RANK}"
            )
