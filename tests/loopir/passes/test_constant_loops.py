"""Loops whose trip count and initial condition are constants and whose stack has a dynamic
shape compile on the CPU (keep-constant-loops-at-run-time), found by the differential campaign
(seed 42424020)."""

from __future__ import annotations

import pytest

import ov_loops
from ov_loops.loopir.passes.constant_loops import KeepConstantLoopsAtRunTime
from ov_loops.reference.onnx_reference import run_onnx
from tests.harness import assert_matches_onnxruntime, compile_f32
from tests.loop_scenarios import SCENARIOS

CONSTANT_LOOPS = [
    "loop_of_constants_with_if_stops_early",
    "loop_of_constants_nested_in_a_runtime_loop",
]


def _onnx_reference(model):
    return lambda feeds: run_onnx(model, feeds)


@pytest.mark.parametrize("optimize", ["none", "default", "max"])
@pytest.mark.parametrize("name", CONSTANT_LOOPS)
def test_constant_loop_compiles_and_matches_the_onnx_reference(name, optimize, tmp_path):
    model, runs = SCENARIOS[name]()
    conversion = assert_matches_onnxruntime(
        model, runs, tmp_path, oracle=_onnx_reference, optimize=optimize
    )
    assert "RandomUniform" in _op_types(conversion.model)  # the pass ran (and is still needed)


def _op_types(model) -> set[str]:
    """The types of the ops of `model` and of the bodies inside it."""
    types = set()
    for op in model.get_ordered_ops():
        types.add(op.get_type_name())
        if op.get_type_name() == "Loop":
            types |= _op_types(op.get_function())
    return types


@pytest.mark.parametrize("name", CONSTANT_LOOPS)
def test_without_the_pass_the_cpu_plugin_cannot_compile_it(name, tmp_path, monkeypatch):
    """The pitfall is still there in this OpenVINO: when this fails, the pass may go."""
    monkeypatch.setattr(KeepConstantLoopsAtRunTime, "run", lambda self, loop: loop)
    model, _ = SCENARIOS[name]()
    xml = tmp_path / "model.xml"
    ov_loops.save(ov_loops.translate(model, optimize="none").model, xml, compress_to_fp16=False)
    with pytest.raises(RuntimeError, match="Can not create StaticMemory object"):
        compile_f32(xml)
