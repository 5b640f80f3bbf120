"""HoistSlicedComputation: its batching rules against the op applied part by part, what it does
to the LoopIR scenarios (tests/loopir/passes/test_passes.py runs them all through the IR reference
before and after it), and an ONNX Scan RNN converted with and without it on the CPU plugin."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import openvino.opset16 as opset16
import pytest

import ov_loops
from benchmarks.rnn_loop import rnn_loop_model
from benchmarks.rnn_scan import rnn_scan_model
from ov_loops.contract.spec import SlicedInput
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.concat_copies import CopyCapturesIntoConcats
from ov_loops.loopir.passes.constants import InlineConstantCaptures
from ov_loops.loopir.passes.hoist_sliced import MAX_ROWS_PER_PART, RULES, HoistSlicedComputation
from ov_loops.loopir.passes.pipeline import CPU, PIPELINE
from ov_loops.reference.ir.executor import run_ir
from tests.harness import assert_matches_onnxruntime, compile_f32
from tests.loopir_scenarios import (
    carried_value_feeds_the_matmul,
    parts_cut_in_opposite_directions,
    reversed_vector_projection_runtime_trip_count,
    rnn_step_batch_first,
    rnn_step_input_projection,
    sliced_operand_on_the_right,
)
from tests.onnx_builders import T, const, graph, model, node, typed

PARTS = 3  # the length of the extra axis in the rule tests


def _parameters(shapes, element: ov.Type = ov.Type.f32) -> list[ov.Node]:
    return [ops.parameter(ov.PartialShape(list(shape)), element) for shape in shapes]


def _run(parameters: list[ov.Node], value: ov.Output, feeds: list, path: Path) -> np.ndarray:
    """`value` of the graph of `parameters`, fed `feeds`, by the IR reference."""
    for index, parameter in enumerate(parameters):
        parameter.set_friendly_name(f"in{index}")
    result = ops.result(value)
    result.set_friendly_name("out")
    ov.save_model(ov.Model([result], parameters), path, compress_to_fp16=False)
    return run_ir(path, {f"in{k}": feed for k, feed in enumerate(feeds)})["out"]


def _with_extra(shape, axis: int | None) -> list[int]:
    return list(shape) if axis is None else [*shape[:axis], PARTS, *shape[axis:]]


def _assert_rule_agrees(make, shapes, axes, tmp_path: Path) -> None:
    """The batched node `make` (parameters -> node) builds, on inputs with the extra axis where
    `axes` say, equals the node on each part, stacked at the rule's output axis."""
    node = make(_parameters(shapes))
    batching = RULES[node.get_type_name()].batch(node, list(axes))
    assert batching is not None
    rng = np.random.default_rng(0)
    data = [
        rng.standard_normal(_with_extra(shape, axis)).astype(np.float32)
        for shape, axis in zip(shapes, axes)
    ]
    batched = _parameters(_with_extra(shape, axis) for shape, axis in zip(shapes, axes))
    value = batching.build([parameter.output(0) for parameter in batched])
    got = _run(batched, value, data, tmp_path / "batched.xml")
    parts = []
    for part in range(PARTS):
        feeds = [x if axis is None else np.take(x, part, axis) for x, axis in zip(data, axes)]
        one = _parameters(shapes)
        parts.append(_run(one, make(one).output(0), feeds, tmp_path / f"part{part}.xml"))
    np.testing.assert_allclose(got, np.stack(parts, batching.axis), rtol=1e-5, atol=1e-6)


def _matmul(transpose_a: bool = False, transpose_b: bool = False):
    return lambda inputs: ops.matmul(*inputs, transpose_a, transpose_b)


RULE_CASES = {
    "matmul left, batch dims": (_matmul(), [[2, 3], [3, 4]], [0, None]),
    "matmul left, rows before K": (_matmul(), [[2, 3], [3, 4]], [1, None]),
    "matmul left rows, right vector": (_matmul(), [[2, 3], [3]], [1, None]),
    "matmul left, right has batch dims": (_matmul(), [[5, 2, 3], [5, 3, 4]], [1, None]),
    "matmul right": (_matmul(), [[4, 3], [3, 2]], [None, 0]),
    "matmul right, transposed": (_matmul(transpose_b=True), [[4, 3], [2, 3]], [None, 0]),
    "matmul right, left has batch dims": (_matmul(), [[2, 4, 3], [3, 2]], [None, 0]),
    "matmul left vector": (_matmul(), [[3], [3, 4]], [0, None]),
    "matmul left vector, parts as columns": (_matmul(), [[3], [3, 4]], [1, None]),
    "matmul left vector, right batch dims": (_matmul(), [[3], [2, 3, 4]], [0, None]),
    "matmul two vectors": (_matmul(), [[3], [3]], [0, None]),
    "matmul right vector": (_matmul(), [[4, 3], [3]], [None, 0]),
    "matmul right vector, parts as columns": (_matmul(), [[2, 4, 3], [3]], [None, 1]),
    "matmul both batched": (_matmul(), [[2, 3], [3, 4]], [0, 0]),
    "add, fixed operand gets the axis": (lambda x: ops.add(*x), [[2, 3], [3]], [2, None]),
    "add, batched operand of lower rank": (lambda x: ops.add(*x), [[3], [2, 3]], [0, None]),
    "subtract, both batched": (lambda x: ops.subtract(*x), [[2, 3], [2, 3]], [1, 1]),
    "divide, fixed scalar": (lambda x: ops.divide(*x), [[2, 3], []], [1, None]),
    "maximum, fixed first": (lambda x: ops.maximum(*x), [[3], [2, 3]], [None, 1]),
    "tanh": (lambda x: ops.tanh(*x), [[2, 3]], [1]),
    "clamp": (lambda x: ops.clamp(*x, -0.5, 0.5), [[2, 3]], [2]),
    "convert": (lambda x: ops.convert(*x, ov.Type.f32), [[2]], [0]),
    "identity": (lambda x: opset16.identity(*x), [[2, 3]], [0]),
}


@pytest.mark.parametrize("make, shapes, axes", RULE_CASES.values(), ids=RULE_CASES.keys())
def test_a_batched_op_equals_the_op_on_each_part(make, shapes, axes, tmp_path):
    _assert_rule_agrees(make, shapes, axes, tmp_path)


REFUSED = {
    "matmul left, after K": (_matmul(), [[2, 3], [3, 4]], [2, None]),
    "matmul left rows, right has batch dims": (_matmul(), [[2, 3], [5, 3, 4]], [1, None]),
    "matmul left rows, transposed": (_matmul(transpose_a=True), [[3, 2], [3, 4]], [1, None]),
    "matmul right, between K and N": (_matmul(), [[2, 3], [3, 4]], [None, 1]),
    "matmul both vectors batched": (_matmul(), [[3], [3]], [0, 0]),
    "add, axes that disagree": (lambda x: ops.add(*x), [[2, 3], [2, 3]], [0, 1]),
}


@pytest.mark.parametrize("make, shapes, axes", REFUSED.values(), ids=REFUSED.keys())
def test_a_rule_refuses_what_it_cannot_batch(make, shapes, axes):
    node = make(_parameters(shapes))
    assert RULES[node.get_type_name()].batch(node, axes) is None


@pytest.mark.parametrize(
    "rows, heavy",
    [([], True), ([8], True), ([2, 4], True), ([16], False), ([2, 8], False), ([-1], False)],
)
def test_a_matmul_is_heavy_with_few_static_rows_per_iteration(rows, heavy):
    """MAX_ROWS_PER_PART: hoisting a product of 16 rows measured slower, a dynamic count may be."""
    assert MAX_ROWS_PER_PART == 8
    left, weight = _parameters([[*rows, 3], [3, 4]])
    assert RULES["MatMul"].heavy(ops.matmul(left, weight, False, False)) is heavy
    assert not RULES["Add"].heavy(ops.add(left, left))


def test_integer_divide_is_not_batched():
    """A row no iteration reads may divide by zero: integers would trap."""
    node = ops.divide(*_parameters([[2], [2]], ov.Type.i32))
    assert RULES["Divide"].batch(node, [0, None]) is None


# -- the pass on LoopIR scenarios ---------------------------------------------------------------
def _body_types(loop: LoopIR) -> list[str]:
    return [op.get_type_name() for op in loop.body.get_ordered_ops()]


def _hoisted_value(loop: LoopIR) -> ov.Node:
    """The outer node of the (one) sliced input."""
    (entry,) = loop.spec.sliced_inputs
    return loop.outer[entry.external_port].get_node()


def test_the_input_projection_of_an_rnn_step_moves_before_the_loop():
    """x_t W + b: one MatMul on xs [5, 2, 3] and one Add before the loop; the body keeps h R;
    the sliced xs and the invariant b, no longer read, are gone."""
    loop, parameters, _ = rnn_step_input_projection()
    xs, _, bias = parameters
    assert _body_types(loop).count("MatMul") == 2
    after = HoistSlicedComputation()(loop)
    assert _body_types(after).count("MatMul") == 1
    assert "Add" in _body_types(after)  # (x_t W + b) + h R
    add = _hoisted_value(after)
    matmul = add.input_value(0).get_node()
    assert add.get_type_name() == "Add" and add.input_value(1) == bias.output(0)
    assert matmul.get_type_name() == "MatMul" and matmul.input_value(0) == xs.output(0)
    assert list(add.get_output_partial_shape(0).to_shape()) == [5, 2, 4]
    assert after.spec.sliced_inputs == (SlicedInput(3, 1, 0),)
    assert not after.spec.invariant_inputs
    assert after.spec.merged_inputs == loop.spec.merged_inputs
    assert set(after.outer) == {2, 3}
    assert after.applied == ("hoisted 1 MatMul",)


def test_a_batch_first_slice_keeps_its_axis():
    loop, _, _ = rnn_step_batch_first()
    after = HoistSlicedComputation()(loop)
    assert after.spec.sliced_inputs == (SlicedInput(3, 1, 1),)
    shape = _hoisted_value(after).get_output_partial_shape(0)
    assert list(shape.to_shape()) == [2, 5, 4]


def test_a_reversed_slice_stays_reversed():
    loop, _, _ = reversed_vector_projection_runtime_trip_count()
    after = HoistSlicedComputation()(loop)
    (entry,) = after.spec.sliced_inputs
    assert (entry.axis, entry.start, entry.stride, entry.end) == (0, -1, -1, 0)
    matmul = _hoisted_value(after)
    assert matmul.get_type_name() == "MatMul"
    assert list(matmul.get_output_partial_shape(0).to_shape()) == [4, 2]
    assert "MatMul" not in _body_types(after)
    assert after.applied == ("hoisted 1 MatMul",)


def test_a_sliced_right_operand_is_hoisted():
    loop, parameters, _ = sliced_operand_on_the_right()
    after = HoistSlicedComputation()(loop)
    matmul = _hoisted_value(after)
    assert matmul.input_value(1) == parameters[0].output(0)
    assert list(matmul.get_output_partial_shape(0).to_shape()) == [4, 5, 2]
    assert "MatMul" not in _body_types(after)


@pytest.mark.parametrize(
    "builder", [carried_value_feeds_the_matmul, parts_cut_in_opposite_directions]
)
def test_a_loop_without_a_hoistable_matmul_is_left_alone(builder):
    """A MatMul reading a carried value, or parts cut in opposite directions, stays; the
    elementwise x_t * 2 alone is not worth a sliced input."""
    loop, _, _ = builder()
    assert HoistSlicedComputation()(loop) is loop


def test_it_runs_from_level_default_after_the_constants_are_inlined():
    assert not CPU.runs(HoistSlicedComputation, "none")
    assert CPU.runs(HoistSlicedComputation, "default")
    position = PIPELINE.index(HoistSlicedComputation)
    assert PIPELINE.index(InlineConstantCaptures) < position
    assert position < PIPELINE.index(CopyCapturesIntoConcats)  # the CPU workarounds follow


def test_after_inlining_the_constant_weight_is_copied_before_the_loop():
    loop, _, _ = sliced_operand_on_the_right()
    after = HoistSlicedComputation()(InlineConstantCaptures()(loop))
    weight = _hoisted_value(after).input_value(0).get_node()
    assert weight.get_type_name() == "Constant"
    assert weight not in [op for op in after.body.get_ordered_ops()]


# -- end to end ---------------------------------------------------------------------------------
def _outer_and_body_matmuls(model: ov.Model) -> tuple[int, int]:
    (loop,) = [op for op in model.get_ordered_ops() if op.get_type_name() == "Loop"]
    outer = [op.get_type_name() for op in model.get_ordered_ops()].count("MatMul")
    body = [op.get_type_name() for op in loop.get_function().get_ordered_ops()].count("MatMul")
    return outer, body


@pytest.mark.parametrize("build", [rnn_scan_model, rnn_loop_model], ids=["scan", "loop"])
def test_the_bench_rnns_compute_the_same_with_their_input_projection_hoisted(build):
    """The Scan slices X; the Loop's Gather(X, i) is read as a slice and then an Identity."""
    data = build(hidden=8).SerializeToString()
    plain = ov_loops.translate(data, optimize="none")
    hoisted = ov_loops.translate(data, optimize="default")
    assert _outer_and_body_matmuls(plain.model) == (0, 2)
    assert _outer_and_body_matmuls(hoisted.model) == (1, 1)
    (report,) = hoisted.loops
    assert "hoisted 1 MatMul" in report.optimizations
    rng = np.random.default_rng(0)
    feeds = {
        "X": rng.standard_normal((6, 1, 8)).astype(np.float32),
        "h0": rng.standard_normal((1, 8)).astype(np.float32),
    }
    expected = compile_f32(ov.convert_model(io.BytesIO(data)))(feeds)
    for conversion in (plain, hoisted):
        got = compile_f32(conversion.model)(feeds)
        for index in range(2):
            np.testing.assert_allclose(got[index], expected[index], rtol=1e-5, atol=1e-5)


def _f32(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _scan(body, inputs, outputs, initializers, **attributes):
    scan = node(
        "Scan", [i.name for i in inputs], [o.name for o in outputs], body=body, **attributes
    )
    return model(graph([scan], inputs, outputs, initializers), opset=16)


def _reversed_batch_first_rnn():
    """h = tanh(x_t W + b + h R) over x [2, T, 3] along axis 1, from its end."""
    body = graph(
        [
            node("MatMul", ["x_t", "W"], ["xw"]),
            node("Add", ["xw", "b"], ["xwb"]),
            node("MatMul", ["h_in", "R"], ["hr"]),
            node("Add", ["xwb", "hr"], ["pre"]),
            node("Tanh", ["pre"], ["h_out"]),
            node("Identity", ["h_out"], ["y_t"]),
        ],
        [typed("h_in", T.FLOAT, [2, 4]), typed("x_t", T.FLOAT, [2, 3])],
        [typed("h_out", T.FLOAT, [2, 4]), typed("y_t", T.FLOAT, [2, 4])],
        name="body",
    )
    weights = [const("W", _f32(3, 4, seed=1)), const("R", _f32(4, 4, seed=2) / 4)]
    return _scan(
        body,
        [typed("h0", T.FLOAT, [2, 4]), typed("x", T.FLOAT, [2, "T", 3])],
        [typed("h", T.FLOAT, [2, 4]), typed("ys", T.FLOAT, ["T", 2, 4])],
        [*weights, const("b", _f32(4, seed=3))],
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_input_directions=[1],
    )


def _projection_carried_and_stacked():
    """The hoisted x_t W is the carried state itself and a scan output; z_t = previous + it."""
    body = graph(
        [
            node("MatMul", ["x_t", "W"], ["s_out"]),
            node("Add", ["s_in", "s_out"], ["z_t"]),
            node("Identity", ["s_out"], ["y_t"]),
        ],
        [typed("s_in", T.FLOAT, [4]), typed("x_t", T.FLOAT, [3])],
        [typed("s_out", T.FLOAT, [4]), typed("y_t", T.FLOAT, [4]), typed("z_t", T.FLOAT, [4])],
        name="body",
    )
    return _scan(
        body,
        [typed("s0", T.FLOAT, [4]), typed("x", T.FLOAT, ["T", 3])],
        [
            typed("s", T.FLOAT, [4]),
            typed("ys", T.FLOAT, ["T", 4]),
            typed("zs", T.FLOAT, ["T", 4]),
        ],
        [const("W", _f32(3, 4, seed=4))],
        num_scan_inputs=1,
    )


def test_a_reversed_batch_first_scan_rnn_matches_onnxruntime_hoisted(tmp_path):
    """Runs of changing lengths, one of them zero (the batched MatMul then has no rows)."""
    runs = [{"h0": _f32(2, 4), "x": _f32(2, steps, 3, seed=steps)} for steps in (5, 1, 3)]
    empty = {"h0": _f32(2, 4), "x": _f32(2, 0, 3)}
    runs.insert(2, (empty, [empty["h0"], np.zeros((0, 2, 4), np.float32)]))
    conversion = assert_matches_onnxruntime(_reversed_batch_first_rnn(), runs, tmp_path)
    (report,) = conversion.loops
    assert "hoisted 1 MatMul" in report.optimizations


def test_a_hoisted_value_carried_and_stacked_matches_onnxruntime(tmp_path):
    """The back edge and a scan output read the new sliced input's part itself (a view the CPU
    plugin's back-edge workaround copies)."""
    runs = [{"s0": _f32(4), "x": _f32(steps, 3, seed=steps)} for steps in (4, 1, 6)]
    conversion = assert_matches_onnxruntime(_projection_carried_and_stacked(), runs, tmp_path)
    (report,) = conversion.loops
    assert "hoisted 1 MatMul" in report.optimizations
