"""IterationParameterFirst: the current_iteration Parameter moves to index 0.

What the loop computes is kept by every pass over every LoopIR scenario
(tests/loopir/passes/test_passes.py); here: where the Parameter goes, and the OpenVINO fault it
avoids, on the CPU."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.loopir.passes.iteration_first import IterationParameterFirst
from ov_loops.loopir.passes.pipeline import CPU
from ov_loops.lower.loop5 import lower_to_loop5
from tests.harness import compile_f32
from tests.loopir_scenarios import SCENARIOS


def test_the_iteration_parameter_comes_first_and_every_input_follows_its_parameter():
    loop, _, _ = SCENARIOS["iteration_parameter_after_an_output_only_one"]()
    before = loop.body.get_parameters()
    fed = {entry.external_port: before[entry.body_parameter] for entry in loop.spec.inputs()}
    moved = IterationParameterFirst()(loop)
    after = moved.body.get_parameters()
    assert moved.spec.current_iteration == 0
    assert after[0] is before[loop.spec.current_iteration]
    assert {p.get_instance_id() for p in after} == {p.get_instance_id() for p in before}
    for entry in moved.spec.inputs():
        assert after[entry.body_parameter] is fed[entry.external_port]


def test_a_loop_whose_iteration_is_first_is_left_alone():
    loop, _, _ = SCENARIOS["unroll_reads_capture_at_iteration_number"]()
    assert loop.spec.current_iteration == 0
    assert IterationParameterFirst()(loop) is loop


def test_a_graph_that_skips_an_output_gets_the_iteration_numbers_on_the_cpu():
    """acc = 0 + 1 + 2 + 3 + 4 when the graph reads output 1 only. Before the pass (OpenVINO
    2026.4.1) compile failed: the Parameter read only for output 0 was dropped and the
    iteration's index, after it, was not moved down."""
    loop, parameters, feeds = SCENARIOS["iteration_parameter_after_an_output_only_one"]()
    assert loop.spec.current_iteration == 2
    outputs = lower_to_loop5(CPU.run(loop))
    model = ov.Model([ops.result(outputs[1])], parameters)
    (got,) = compile_f32(model)([feeds[p.get_friendly_name()] for p in parameters]).values()
    assert int(got) == sum(range(5))
    assert np.asarray(got).dtype == np.int64
