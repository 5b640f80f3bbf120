"""LoopSpec + converted body -> an OpenVINO Loop-5 node."""

from __future__ import annotations

from collections.abc import Mapping

import openvino as ov
import openvino.opset15 as ops

from ov_loops.loops.spec import (
    ConcatenatedOutput,
    InvariantInput,
    LoopSpec,
    MergedInput,
    SlicedInput,
)


def build_loop(
    spec: LoopSpec,
    body: ov.Model,
    trip_count: ov.Output,
    condition: ov.Output,
    external_inputs: Mapping[int, ov.Output],
    name: str,
) -> list[ov.Output]:
    """Emit a Loop-5 for `spec`; return its outputs in external_port order.

    `external_inputs` maps each port_map input's external_port (2, 3, ...) to its outer value.
    `name` (the ONNX node path) is also kept in the Loop's rt_info as `ov_loops_path`, which
    the IR keeps too.
    """
    loop = ops.loop(trip_count, condition)
    loop.set_friendly_name(name)
    loop.get_rt_info()["ov_loops_path"] = name
    loop.set_function(body)
    current = -1 if spec.current_iteration is None else spec.current_iteration
    condition_result = -1 if spec.execution_condition is None else spec.execution_condition
    loop.set_special_body_ports([current, condition_result])
    parameters = body.get_parameters()
    results = body.get_results()

    inputs = sorted(
        (*spec.sliced_inputs, *spec.merged_inputs, *spec.invariant_inputs),
        key=lambda entry: entry.external_port,
    )
    for port, entry in enumerate(inputs, start=2):
        assert entry.external_port == port, f"port_map inputs must be 2..n, got {entry}"
        value = external_inputs[port]
        parameter = parameters[entry.body_parameter]
        if isinstance(entry, SlicedInput):
            loop.set_sliced_input(
                parameter, value, entry.start, entry.stride, entry.part_size, entry.end, entry.axis
            )
        elif isinstance(entry, MergedInput):
            loop.set_merged_input(parameter, value, results[entry.body_result].output(0))
        else:
            assert isinstance(entry, InvariantInput)
            loop.set_invariant_input(parameter, value)

    outputs = sorted(
        (*spec.concatenated_outputs, *spec.last_value_outputs),
        key=lambda entry: entry.external_port,
    )
    produced = []
    for port, entry in enumerate(outputs):
        assert entry.external_port == port, f"outputs must be 0..n, got {entry}"
        value = results[entry.body_result].output(0)
        if isinstance(entry, ConcatenatedOutput):
            produced.append(
                loop.get_concatenated_slices(
                    value, entry.start, entry.stride, entry.part_size, entry.end, entry.axis
                )
            )
        else:
            produced.append(loop.get_iter_value(value, -1))
    loop.validate_and_infer_types()
    return produced
