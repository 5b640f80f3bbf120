"""Loop-5 outputs of one body Result: the CPU plugin crashes natively (SIGSEGV, or "Cannot
create ov::Output<ov::Node> from nullptr!", or bad_weak_ptr, varying from run to run) compiling
a Loop whose body Result is its merged Parameter itself (a value carried unchanged) when two
Loop outputs read that Result's last value (OpenVINO 2026.4.1, in GatedDeltaNetFusion's
SymbolicOptimizations). PyTensor's scan of gradients
(`test_pushout_seqs`) lowered at max gave such a Loop. `build_loop` emits one output per
Result. Compilation runs in a subprocess, so that a crash fails the test instead of killing
pytest."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.spec import (
    TRIP_COUNT_INPUT,
    LastValueOutput,
    LoopSpec,
    MergedInput,
)
from ov_loops.lower.loop5 import build_loop
from tests.child_process import run_python, run_python_surviving

# Compiles the IR at argv[1] on the CPU (f32) and runs it with x = [1, 2], trip count 3.
_COMPILE = """
import sys
import numpy as np, openvino as ov
core = ov.Core()
model = core.read_model(sys.argv[1])
compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
got = compiled([np.int64(3), np.array([1.0, 2.0], np.float32)])
print([v.tolist() for v in got.values()])
"""


def _carried_unchanged() -> tuple[ov.Model, ops.parameter]:
    """A body whose Results are [x (the merged Parameter itself), true]."""
    x = ops.parameter([-1], ov.Type.f32)
    go = ops.constant(np.array(True))
    return ov.Model([ops.result(x), ops.result(go)], [x], "body"), x


def _model(outputs: list[ov.Output], trip: ops.parameter, x: ops.parameter) -> ov.Model:
    total = ops.add(outputs[0], outputs[-1])
    return ov.Model([ops.result(total)], [trip, x], "carried_unchanged")


def _compiled_in_subprocess(
    model: ov.Model, directory: Path, run=run_python
) -> subprocess.CompletedProcess:
    ov.save_model(model, directory / "model.xml", compress_to_fp16=False)
    return run(["-c", _COMPILE, str(directory / "model.xml")], directory)


def test_the_plugin_crashes_on_two_outputs_of_one_parameter_result(tmp_path):
    """The fault itself, outside ov-loops (so that a fixed plugin shows here): two Loop outputs
    of one Result that is the merged Parameter. One output, or a computed Result, compiles."""
    body, x = _carried_unchanged()
    trip, outer = ops.parameter([], ov.Type.i64), ops.parameter([-1], ov.Type.f32)
    loop = ops.loop(trip, ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(x, outer.output(0), body.get_results()[0].output(0))
    value = body.get_results()[0].output(0)
    outputs = [loop.get_iter_value(value, -1), loop.get_iter_value(value, -1)]
    result = _compiled_in_subprocess(_model(outputs, trip, outer), tmp_path)
    crashed = result.returncode < 0 or "from nullptr" in result.stderr
    crashed = crashed or "bad_weak_ptr" in result.stderr
    assert crashed, (result.returncode, result.stdout, result.stderr[-500:])


def test_build_loop_gives_one_output_per_body_result(tmp_path):
    """Two last-value outputs of the carried-unchanged Result (as the remainder split of an
    unrolled scan of gradients made them): one Loop output, which both read; it compiles and
    gives x twice summed. On main the Loop had two outputs and the plugin crashed."""
    body, _ = _carried_unchanged()
    trip, outer = ops.parameter([], ov.Type.i64), ops.parameter([-1], ov.Type.f32)
    spec = LoopSpec(
        TRIP_COUNT_INPUT,
        merged_inputs=(MergedInput(2, 0, 0),),
        last_value_outputs=(LastValueOutput(0, 0), LastValueOutput(1, 0)),
        execution_condition=1,
    )
    condition = ops.constant(np.array(True)).output(0)
    outputs = build_loop(spec, body, trip.output(0), condition, {2: outer.output(0)}, "loop")
    result = _compiled_in_subprocess(_model(outputs, trip, outer), tmp_path, run_python_surviving)
    assert result.returncode == 0, result.stderr[-1500:]
    assert result.stdout.strip() == "[[2.0, 4.0]]"
    assert outputs[0].get_node().get_output_size() == 1
    assert outputs[0] == outputs[1]
