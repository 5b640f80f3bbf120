"""The IR reference: its kernels agree with OpenVINO's CPU plugin, unknown ops are a clear error,
and an unbounded loop stops at the iteration limit."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as opset1
import openvino.opset15 as ops
import pytest

import ov_loops
from ov_loops.errors import ConversionError
from ov_loops.reference.ir.executor import run_ir
from ov_loops.reference.ir.kernels import KERNELS
from tests import loop_scenarios
from tests.harness import compile_f32, run

RNG = np.random.default_rng(4)


def _value(shape, dtype=np.float32):
    return ops.parameter(shape, dtype)


def _kernel_cases():
    """(name, model builder, inputs): one small graph per kernel family."""
    x, y = _value([2, 3]), _value([2, 3])
    a, b = (
        RNG.standard_normal((2, 3)).astype(np.float32),
        RNG.standard_normal((2, 3)).astype(np.float32) + 3,
    )
    c = lambda *v: ops.constant(np.array(v, np.int64))  # noqa: E731
    elementwise = [
        ops.add(x, y),
        ops.subtract(x, y),
        ops.multiply(x, y),
        ops.divide(x, y),
        ops.maximum(x, y),
        ops.minimum(x, y),
        ops.squared_difference(x, y),
        ops.relu(x),
        ops.sigmoid(x),
        ops.tanh(x),
        ops.exp(x),
        ops.abs(x),
        ops.negative(x),
        ops.clamp(x, -0.5, 0.5),
        ops.softmax(x, 1),
        ops.floor_mod(y, ops.constant(np.float32(1.5))),
    ]
    logic = [
        ops.convert(ops.equal(x, x), ov.Type.f32),
        ops.convert(ops.less(x, y), ov.Type.f32),
        ops.convert(ops.logical_and(ops.greater(x, y), ops.less_equal(x, y)), ov.Type.f32),
        ops.select(ops.greater_equal(x, y), x, y),
    ]
    shapes = [
        ops.reshape(x, c(3, 2), False),
        ops.transpose(x, c(1, 0)),
        ops.unsqueeze(x, c(0)),
        ops.squeeze(ops.unsqueeze(x, c(2)), c(2)),
        ops.concat([x, y], 1),
        ops.matmul(x, y, False, True),
        ops.gather(x, c(2, 0), ops.constant(np.int64(1))),
        ops.slice(x, c(0, 2), c(2, 0), c(1, -1)),
        opset1.strided_slice(x, c(0, 1), c(2, 3), c(1, 1), [0, 0], [0, 0]),
        ops.broadcast(ops.constant(np.float32(2)), c(2, 3)),
        ops.tile(x, c(2, 1)),
        ops.reduce_sum(x, c(1), False),
        ops.reduce_mean(x, c(0), True),
        ops.reduce_max(x, c(1), False),
        ops.reduce_min(x, c(1), False),
        ops.reduce_prod(x, c(0), False),
        ops.convert(ops.shape_of(x), ov.Type.f32),
        ops.convert(
            ops.range(
                ops.constant(np.int64(1)),
                ops.constant(np.int64(7)),
                ops.constant(np.int64(2)),
                ov.Type.i64,
            ),
            ov.Type.f32,
        ),
    ]
    on_0, on_1 = ops.constant(np.int64(0)), ops.constant(np.int64(1))
    rows = ops.constant(np.array([[1, 0, -1]], np.int64))  # fewer rows than x: a partial update
    sums_and_scatters = [
        *(ops.cumsum(x, on_1, exclusive, reverse) for exclusive in (0, 1) for reverse in (0, 1)),
        ops.cumsum(x, on_0, True, False),
        ops.scatter_elements_update(x, rows, ops.slice(y, c(0), c(1), c(1), c(0)), on_0),
        ops.convert(ops.convert_like(ops.floor(ops.multiply(x, ops.constant(np.float32(3)))),
                                     ops.constant(np.zeros(1, np.int32))), ov.Type.f32),
    ]  # fmt: skip
    axis = ops.constant(np.int64(1))
    splits = list(ops.split(x, axis, 3).outputs()) + list(
        ops.variadic_split(x, axis, c(1, 2)).outputs()
    )
    for name, outputs in [
        ("elementwise", elementwise),
        ("logic", logic),
        ("shapes", shapes),
        ("splits", splits),
        ("sums and scatters", sums_and_scatters),
    ]:
        named = []
        for index, output in enumerate(outputs):
            value = output.output(0) if hasattr(output, "output") else output
            value.set_names({f"out{index}"})  # before the Result names it (the IR keeps one)
            named.append(ops.result(value))
        yield name, ov.Model(named, [x, y]), {"x": a, "y": b}


@pytest.mark.parametrize(
    "name, made, inputs", list(_kernel_cases()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_kernels_agree_with_the_cpu_plugin(name, made, inputs, tmp_path):
    for parameter, key in zip(made.get_parameters(), inputs):
        parameter.output(0).set_names({key})
    ov.save_model(made, str(tmp_path / "kernels.xml"), compress_to_fp16=False)
    expected = run(compile_f32(tmp_path / "kernels.xml"), inputs)
    got = run_ir(tmp_path / "kernels.xml", inputs)
    for index, want in enumerate(expected):
        np.testing.assert_allclose(
            got[f"out{index}"], want, rtol=1e-5, atol=1e-6, err_msg=f"{name} output {index}"
        )


def test_kernel_table_covers_the_issue_list():
    wanted = {
        "Add",
        "Subtract",
        "Multiply",
        "Divide",
        "Equal",
        "Less",
        "LogicalAnd",
        "Relu",
        "Sigmoid",
        "Tanh",
        "MatMul",
        "Concat",
        "Split",
        "Squeeze",
        "Unsqueeze",
        "Reshape",
        "Transpose",
        "Gather",
        "Slice",
        "StridedSlice",
        "ShapeOf",
        "Broadcast",
        "Select",
        "Convert",
        "Range",
        "ReduceSum",
        "ReduceMean",
        "SoftMax",
        "Reverse",
    }
    assert wanted <= set(KERNELS)


def test_unknown_op_is_an_error_naming_it(tmp_path):
    x = _value([2])
    ov.save_model(ov.Model([ops.result(ops.elu(x, 1.0))], [x]), str(tmp_path / "elu.xml"))
    with pytest.raises(ConversionError, match="no kernel for Elu"):
        run_ir(tmp_path / "elu.xml", {x.get_friendly_name(): np.zeros(2, np.float32)})


def test_unbounded_loop_stops_at_the_iteration_limit(tmp_path):
    counter = ops.parameter([], np.float32)
    result = ops.result(ops.add(counter, ops.constant(np.float32(1))))
    keep = ops.result(ops.constant(True))
    body = ov.Model([result, keep], [counter])
    start = ops.parameter([], np.float32, name="start")
    loop = ops.loop(ops.constant(np.int64(-1)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(counter, start.output(0), result.output(0))
    made = ov.Model([loop.get_iter_value(result.output(0), -1)], [start])
    ov.save_model(made, str(tmp_path / "forever.xml"))
    with pytest.raises(ConversionError, match="limit of 25 iterations in total"):
        run_ir(tmp_path / "forever.xml", {"start": np.array(0, np.float32)}, max_iterations=25)


def test_nested_loops_share_one_iteration_budget(tmp_path):
    """5 outer, 5 x 5 middle, 5 x 5 x 5 inner iterations: 155 in total."""
    made, runs = loop_scenarios.loop_nested_three_deep_with_captures()
    ov_loops.save(ov_loops.convert(made), tmp_path / "nested.xml", compress_to_fp16=False)
    feeds = {**runs[0], **{k: np.array(5) for k in ("M", "middle_trips", "inner_trips")}}
    run_ir(tmp_path / "nested.xml", feeds, max_iterations=155)
    with pytest.raises(ConversionError, match="limit of 154 iterations in total"):
        run_ir(tmp_path / "nested.xml", feeds, max_iterations=154)


def _growing_concatenation(path):
    """x <- concat(x, x, axis 1) on [1, n], its values concatenated along axis 0: the parts
    [1, 2n], [1, 4n], ... cannot be joined."""
    x_in = ops.parameter([1, -1], np.float32, name="x_in")
    x_out = ops.result(ops.concat([x_in, x_in], 1))
    body = ov.Model([x_out, ops.result(ops.constant(True))], [x_in])
    x0 = ops.parameter([1, 2], np.float32, name="x0")
    loop = ops.loop(ops.constant(np.int64(3)), ops.constant(True))
    loop.set_friendly_name("growing")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(x_in, x0.output(0), x_out.output(0))
    parts = loop.get_concatenated_slices(x_out.output(0), 0, 1, 1, -1, 0)
    ov.save_model(ov.Model([parts], [x0]), str(path))
    return path


def _simple_ir(path):
    x = ops.parameter([2], np.float32, name="x")
    added = ops.add(x, ops.constant(np.array([1, 2], np.float32)))
    ov.save_model(ov.Model([ops.result(added)], [x]), str(path), compress_to_fp16=False)
    return path


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


def test_failures_outside_kernels_are_one_conversion_error(tmp_path):
    """Concatenating mismatched parts, a port without a producer, a Const whose size does not
    match its shape: each a ConversionError naming the layer, never numpy's or a KeyError."""
    x2 = {"x": np.zeros(2, np.float32), "x0": np.zeros((1, 2), np.float32)}
    growing = _growing_concatenation(tmp_path / "growing.xml")
    with pytest.raises(ConversionError, match="Loop 'growing' failed: .*concatenation"):
        run_ir(growing, x2)
    unwired = _edit(_simple_ir(tmp_path / "unwired.xml"), '<edge from-layer="0"', "<nothing ")
    with pytest.raises(ConversionError, match="IR reference: Add '.*' failed"):
        run_ir(unwired, x2)
    short = _edit(_simple_ir(tmp_path / "short.xml"), 'size="8"', 'size="6"')
    with pytest.raises(ConversionError, match="IR reference: Const '.*' failed"):
        run_ir(short, x2)
    with pytest.raises(ov_loops.InputError, match="Loop 'growing' failed"):
        ov_loops.check(growing)
