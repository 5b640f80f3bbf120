"""The Theano-style builder: every runnable example of the Theano scan guide against numpy, the
map/reduce/fold variants, and its errors. Every model built is saved and validated."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from tests.harness import compile_f32, run

F32, I32, I64 = np.float32, np.int32, np.int64


def _run(outputs, parameters, feeds, tmp_path):
    """Save the model, validate it (no finding), compile on CPU in f32, run."""
    outputs = outputs if isinstance(outputs, list) else [outputs]
    made = ov.Model([ops.result(o) for o in outputs], parameters, "built")
    ov_loops.save(made, tmp_path / "built.xml", compress_to_fp16=False)
    report = ov_loops.validate(tmp_path / "built.xml")
    assert report.loops >= 1 and not report.findings, [f.message for f in report.findings]
    compiled = compile_f32(tmp_path / "built.xml")
    return run(compiled, feeds)


def _parameter(name, shape, dtype):
    return ops.parameter(shape, dtype, name=name)


def test_a_to_the_k(tmp_path):
    A, k = _parameter("A", [-1], F32), _parameter("k", [], I64)
    ones = ops.broadcast(ops.constant(F32(1)), ops.shape_of(A))
    result, updates = ov_loops.scan(
        lambda prior, a: ops.multiply(prior, a), outputs_info=ones, non_sequences=A, n_steps=k
    )
    assert updates == {}
    a = np.arange(10, dtype=F32)
    for steps in (2, 0, 5):
        (powers,) = _run(result, [A, k], {"A": a, "k": np.array(steps)}, tmp_path)
        assert powers.shape == (steps, 10)
        if steps:
            np.testing.assert_allclose(powers[-1], a**steps)


def test_polynomial_evaluation(tmp_path):
    coefficients, x = _parameter("coefficients", [-1], F32), _parameter("x", [], F32)
    powers = ops.convert(
        ops.range(
            ops.constant(I64(0)), ops.constant(I64(10000)), ops.constant(I64(1)), ov.Type.i64
        ),
        ov.Type.f32,
    )
    components, _ = ov_loops.scan(
        lambda coefficient, power, free: ops.multiply(coefficient, ops.power(free, power)),
        outputs_info=None,
        sequences=[coefficients, powers],
        non_sequences=x,
    )
    polynomial = ops.reduce_sum(components, ops.constant(np.array([0], I64)), False)
    test_coefficients = np.asarray([1, 0, 2], dtype=F32)
    (value,) = _run(
        polynomial,
        [coefficients, x],
        {"coefficients": test_coefficients, "x": np.array(3, F32)},
        tmp_path,
    )
    assert value == pytest.approx(sum(c * 3**p for p, c in enumerate(test_coefficients)))


def test_triangular_numbers(tmp_path):
    up_to = _parameter("up_to", [], I32)
    seq = ops.range(ops.constant(I32(0)), up_to, ops.constant(I32(1)), ov.Type.i32)
    result, _ = ov_loops.scan(
        lambda value, total: ops.add(total, value), outputs_info=ops.constant(I32(0)), sequences=seq
    )
    (numbers,) = _run(result, [up_to], {"up_to": np.array(15, I32)}, tmp_path)
    np.testing.assert_array_equal(numbers, [n * (n + 1) // 2 for n in range(15)])


def test_set_value_at_position(tmp_path):
    location = _parameter("location", [-1, 2], I32)
    values = _parameter("values", [-1], F32)
    model_like = _parameter("output_model", [5, 5], F32)

    def set_value_at_position(a_location, a_value, output_model):
        zeros = ops.broadcast(ops.constant(F32(0)), ops.shape_of(output_model))
        indices = ops.unsqueeze(a_location, ops.constant(np.array([0], I64)))
        updates = ops.unsqueeze(a_value, ops.constant(np.array([0], I64)))
        return ops.scatter_nd_update(zeros, indices, updates)

    result, _ = ov_loops.scan(
        set_value_at_position,
        outputs_info=None,
        sequences=[location, values],
        non_sequences=model_like,
    )
    (placed,) = _run(
        result,
        [location, values, model_like],
        {
            "location": np.asarray([[1, 1], [2, 3]], I32),
            "values": np.asarray([42, 50], F32),
            "output_model": np.zeros((5, 5), F32),
        },
        tmp_path,
    )
    expected = np.zeros((2, 5, 5), F32)
    expected[0, 1, 1], expected[1, 2, 3] = 42, 50
    np.testing.assert_array_equal(placed, expected)


def test_powers_of_two_until(tmp_path):
    max_value = _parameter("max_value", [], F32)

    def power_of_2(previous_power, limit):
        doubled = ops.multiply(previous_power, ops.constant(F32(2)))
        return doubled, ov_loops.until(ops.greater(doubled, limit))

    values, _ = ov_loops.scan(
        power_of_2, outputs_info=ops.constant(F32(1)), non_sequences=max_value, n_steps=1024
    )
    (powers,) = _run(values, [max_value], {"max_value": np.array(45, F32)}, tmp_path)
    np.testing.assert_array_equal(powers, [2, 4, 8, 16, 32, 64])


def test_taps_rnn_strict(tmp_path):
    """The guide's RNN: sequence taps [-4, 0], output taps [-3, -1] and the default [-1]."""
    n_in, n_hid, n_out = 2, 3, 2
    rng = np.random.default_rng(0)
    shapes = {
        "W": (n_hid, n_hid),
        "W_in_1": (n_in, n_hid),
        "W_in_2": (n_in, n_hid),
        "W_feedback": (n_out, n_hid),
        "W_out": (n_hid, n_out),
    }
    weights = {k: (rng.standard_normal(s) * 0.4).astype(F32) for k, s in shapes.items()}
    feeds = {
        **weights,
        "u": rng.standard_normal((9, n_in)).astype(F32),
        "x0": rng.standard_normal((3, n_hid)).astype(F32),
        "y0": rng.standard_normal(n_out).astype(F32),
    }
    params = {name: _parameter(name, list(value.shape), F32) for name, value in feeds.items()}

    def one_step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = ops.tanh(
            ops.add(
                ops.add(ops.matmul(x_tm1, W, False, False), ops.matmul(u_t, W_in_1, False, False)),
                ops.add(
                    ops.matmul(u_tm4, W_in_2, False, False),
                    ops.matmul(y_tm1, W_feedback, False, False),
                ),
            )
        )
        y_t = ops.matmul(x_tm3, W_out, False, False)
        return [x_t, y_t]

    (x_vals, y_vals), _ = ov_loops.scan(
        one_step,
        sequences=dict(input=params["u"], taps=[-4, -0]),
        outputs_info=[dict(initial=params["x0"], taps=[-3, -1]), params["y0"]],
        non_sequences=[params[k] for k in shapes],
        strict=True,
    )
    got_x, got_y = _run([x_vals, y_vals], list(params.values()), feeds, tmp_path)

    x_hist, y_prev, xs, ys = list(feeds["x0"]), feeds["y0"], [], []
    for t in range(4, 9):
        w = weights
        x_t = np.tanh(
            x_hist[-1] @ w["W"]
            + feeds["u"][t] @ w["W_in_1"]
            + feeds["u"][t - 4] @ w["W_in_2"]
            + y_prev @ w["W_feedback"]
        )
        y_t = x_hist[-3] @ w["W_out"]
        x_hist.append(x_t)
        y_prev = y_t
        xs.append(x_t)
        ys.append(y_t)
    np.testing.assert_allclose(got_x, np.stack(xs), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_y, np.stack(ys), rtol=1e-5, atol=1e-6)


def test_map_reduce_foldl_foldr(tmp_path):
    seq = _parameter("seq", [-1], F32)
    doubled, _ = ov_loops.map(lambda x: ops.multiply(x, ops.constant(F32(2))), seq)
    total, _ = ov_loops.reduce(lambda x, acc: ops.add(acc, x), seq, ops.constant(F32(0)))
    horner = lambda x, acc: ops.add(ops.multiply(acc, ops.constant(F32(10))), x)  # noqa: E731
    left, _ = ov_loops.foldl(horner, seq, ops.constant(F32(0)))
    right, _ = ov_loops.foldr(horner, seq, ops.constant(F32(0)))
    values = np.array([1, 2, 3], F32)
    got = _run([doubled, total, left, right], [seq], {"seq": values}, tmp_path)
    np.testing.assert_array_equal(got[0], values * 2)
    assert (got[1], got[2], got[3]) == (6, 123, 321)
    empty = _run([doubled, total, left, right], [seq], {"seq": np.zeros(0, F32)}, tmp_path)
    assert empty[0].shape == (0,) and (empty[1], empty[2], empty[3]) == (0, 0, 0)


def test_reduce_uses_a_last_value_output(tmp_path):
    seq = _parameter("seq", [-1], F32)
    total, _ = ov_loops.reduce(lambda x, acc: ops.add(acc, x), seq, ops.constant(F32(0)))
    ov_loops.save(
        ov.Model([ops.result(total)], [seq]), tmp_path / "reduce.xml", compress_to_fp16=False
    )
    text = (tmp_path / "reduce.xml").read_text()
    outputs = [
        line
        for line in text.splitlines()
        if "<output " in line and "external_port_id" in line and "purpose" not in line
    ]
    assert outputs and not any("axis=" in line for line in outputs), outputs


def test_go_backwards_and_negative_n_steps(tmp_path):
    seq = _parameter("seq", [-1], F32)
    backwards, _ = ov_loops.scan(
        lambda x: ops.multiply(x, ops.constant(F32(1))), sequences=seq, go_backwards=True
    )
    back, _ = ov_loops.scan(
        lambda prior: ops.add(prior, ops.constant(F32(1))),
        outputs_info=ops.constant(F32(0)),
        n_steps=-3,
    )
    got = _run([backwards, back], [seq], {"seq": np.array([1, 2, 3, 4], F32)}, tmp_path)
    np.testing.assert_array_equal(got[0], [4, 3, 2, 1])
    np.testing.assert_array_equal(got[1], [1, 2, 3])


def test_captured_values_and_strict(tmp_path):
    W = _parameter("W", [2, 2], F32)
    W_2 = ops.multiply(W, W)
    seq = _parameter("seq", [-1, 2], F32)
    step = lambda x: ops.matmul(x, W_2, False, False)  # noqa: E731
    with pytest.raises(ov_loops.BuilderError, match="strict=True"):
        ov_loops.scan(step, sequences=seq, strict=True)
    mapped, _ = ov_loops.scan(step, sequences=seq)
    w = np.array([[1, 2], [3, 4]], F32)
    x = np.array([[1, 0], [0, 1], [1, 1]], F32)
    (got,) = _run(mapped, [W, seq], {"W": w, "seq": x}, tmp_path)
    np.testing.assert_allclose(got, x @ (w * w))


def test_errors_name_the_argument():
    x = _parameter("x", [3], F32)
    with pytest.raises(
        ov_loops.BuilderError, match="fn: returned 2 outputs, outputs_info describes 1"
    ):
        ov_loops.scan(lambda a: [a, a], outputs_info=x, n_steps=2)
    with pytest.raises(ov_loops.BuilderError, match=r"outputs_info\[0\]: fn returns i32"):
        ov_loops.scan(lambda a: ops.convert(a, ov.Type.i32), outputs_info=x, n_steps=2)
    with pytest.raises(ov_loops.BuilderError, match=r"outputs_info\[0\]: fn returns shape"):
        ov_loops.scan(lambda a: ops.concat([a, a], 0), outputs_info=x, n_steps=2)
    with pytest.raises(
        ov_loops.BuilderError,
        match=r"outputs_info\[0\]: taps \[-3, -1\] need 3 "
        "initial values",
    ):
        ov_loops.scan(
            lambda a, b: a,
            outputs_info=dict(initial=_parameter("h", [2, 3], F32), taps=[-3, -1]),
            n_steps=2,
        )
    with pytest.raises(ov_loops.BuilderError, match="n_steps: needed"):
        ov_loops.scan(lambda a: a, outputs_info=x)
