"""Loops whose trip count and initial condition are constants and whose stack has a dynamic
shape compile on the CPU (keep-constant-loops-at-run-time), found by the differential campaign
(seed 42424020)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T

import ov_loops
from ov_loops.loopir.passes.constant_loops import KeepConstantLoopsAtRunTime
from ov_loops.reference.onnx_reference import run_onnx
from tests.harness import assert_matches_onnxruntime, compile_f32
from tests.loop_scenarios import SCENARIOS
from tests.onnx_builders import const, graph, loop_body, model, node, typed

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


def _counting_to_the_length_of_x():
    """A Loop of Shape(x)[0] iterations stacking 1, 2, ...: its inputs are a shape and
    Constants."""
    body = loop_body(
        [node("Add", ["acc_in", "one"], ["acc_out"]), node("Identity", ["cond_in"], ["go"])],
        [typed("acc_in", T.FLOAT, [])],
        [typed("go", T.BOOL, []), typed("acc_out", T.FLOAT, []), typed("acc_out", T.FLOAT, [])],
        initializers=[const("one", 1.0)],
    )
    main = graph(
        [
            node("Shape", ["x"], ["shape"]),
            node("Gather", ["shape", "zero"], ["n"], axis=0),
            node("Loop", ["n", "true", "start"], ["last", "stack"], body=body),
        ],
        [typed("x", T.FLOAT, [None])],
        [typed("last", T.FLOAT, []), typed("stack", T.FLOAT, [None])],
        initializers=[const("zero", 0, np.int64), const("true", True, bool), const("start", 0.0)],
    )
    return model(main)


@pytest.mark.parametrize(("optimize", "kept"), [("default", False), ("max", True)])
def test_a_loop_of_shapes_that_may_stop_early_reads_a_runtime_zero(optimize, kept):
    """At max the loop is unrolled, its remainder masked by its condition: computed from a
    shape and Constants, the CPU plugin would take it for a constant once the shapes are static
    (PyTensor's gradient of `reduce`, tests/frontends/pytensor/test_scan.py); at default its
    condition stays true and it is left as it is."""
    converted = ov_loops.translate(_counting_to_the_length_of_x(), optimize=optimize).model
    assert ("RandomUniform" in _op_types(converted)) is kept
    got = compile_f32(converted)({0: np.ones(5, np.float32)})
    np.testing.assert_array_equal(list(got.values())[1], np.arange(1.0, 6.0))


@pytest.mark.parametrize(
    ("optimize", "length"),
    [("max", 0), *((level, n) for level in ("default", "max") for n in (1, 5, 16, 17))],
)
def test_a_loop_of_shapes_runs_after_a_reshape_to_static_shapes(optimize, length):
    """Reshaped to static shapes the loop's inputs are constants to OpenVINO's core; at max,
    bounding the lengths of the VariadicSplit that trims the unrolled stack, `reshape` evaluated
    the whole Loop through the run-time zero's RandomUniform and failed ("same_scheme",
    tensor.cpp) until the zero went through an op the core cannot evaluate. (At default, length
    0: the CPU plugin folds the Loop with OpenVINO's reference, which refuses a trip count of
    0, "Check 'trip_count != 0'": not covered.)"""
    converted = ov_loops.translate(_counting_to_the_length_of_x(), optimize=optimize).model
    converted.reshape({0: [length]})
    got = compile_f32(converted)({0: np.ones(length, np.float32)})
    np.testing.assert_array_equal(list(got.values())[1], np.arange(1.0, length + 1.0))
