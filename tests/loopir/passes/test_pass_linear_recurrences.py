"""SolveLinearRecurrences: a loop of scalar steps whose carried values are linear recurrences
becomes one iteration over whole sequences (the IR-reference oracle of every pass is in
test_passes.py: the scenarios below compute the same before and after it)."""

from __future__ import annotations

import numpy as np
import pytest

from ov_loops.contract.spec import LastValueOutput
from ov_loops.loopir.passes.linear_recurrences import SolveLinearRecurrences
from tests.loopir_scenarios import (
    linear_recurrence_of_one_step,
    linear_recurrences_of_scalars,
    outer_products_summed,
    recurrence_coupled_nonlinearly,
    recurrence_without_broadcasting,
)


@pytest.mark.parametrize(
    "build, steps", [(linear_recurrences_of_scalars, 7), (linear_recurrence_of_one_step, 1)]
)
def test_scalar_linear_recurrences_run_as_one_iteration(build, steps):
    loop, _, _ = build()
    after = SolveLinearRecurrences()(loop)
    assert after.trip.constant == 1 and after.spec.trip_count == 1
    assert not after.spec.merged_inputs and not after.carried
    assert after.spec.current_iteration is None and not after.spec.sliced_inputs
    assert all(isinstance(e, LastValueOutput) for e in after.spec.outputs())
    assert [r.port for r in after.results] == [r.port for r in loop.results]
    assert after.applied[0].startswith(f"solved 3 linear recurrence(s) over {steps} steps")
    assert (after.fallback is not None) == (steps > 1)  # x = x r: its products may leave f32
    if after.fallback is not None:  # the replaced loop and the safe flag's port after the others
        assert after.fallback.loop.spec == loop.spec
        assert after.fallback.safe_port == len(loop.spec.outputs())
    kinds = {op.get_type_name() for op in after.body.get_ordered_ops()}
    assert ("CumSum" in kinds) == (steps > 1)  # acc and c add without a factor


@pytest.mark.parametrize(
    "build",
    [recurrence_coupled_nonlinearly, recurrence_without_broadcasting, outer_products_summed],
)
def test_other_loops_stay(build):
    """x = x r + acc * acc is not linear; x * r without broadcasting takes no sequence; a
    runtime trip count and [3, 2] values do not qualify."""
    loop, _, _ = build()
    assert SolveLinearRecurrences()(loop) is loop


def _scan_of_linear_steps(steps: int):
    """ONNX Scan: x = x * a_t + b_t, every x a scan output too."""
    from onnx import TensorProto, helper

    def value(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    body = helper.make_graph(
        [
            helper.make_node("Mul", ["x", "a"], ["xa"]),
            helper.make_node("Add", ["xa", "b"], ["y"]),
            helper.make_node("Identity", ["y"], ["ys"]),
        ],
        "body",
        [value("x", []), value("a", []), value("b", [])],
        [value("y", []), value("ys", [])],
    )
    scan = helper.make_node("Scan", ["x0", "as", "bs"], ["xf", "xs"], body=body, num_scan_inputs=2)
    graph = helper.make_graph(
        [scan],
        "linear_steps",
        [value("x0", []), value("as", [steps]), value("bs", [steps])],
        [value("xf", []), value("xs", [steps])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("first_term", [0.0, 1.0])
def test_a_coefficient_product_beyond_f32_gives_the_loops_values(first_term):
    """a = 2 over 200 steps: A = 2**t overflows f32 from t = 128. With x0 = 0 and b = 0 the loop
    stays 0 (the scan had inf * 0 = NaN); with b_0 = 1 it doubles to inf (the scan had NaN)."""
    import numpy as np
    import openvino as ov

    import ov_loops

    steps = 200
    conversion = ov_loops.translate(_scan_of_linear_steps(steps), optimize="max")
    assert any("linear recurrence" in note for note in conversion.loops[0].optimizations)
    compiled = ov.Core().compile_model(conversion.model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    a = np.full(steps, 2, np.float32)
    b = np.zeros(steps, np.float32)
    b[0] = first_term
    expected, x = [], np.float32(0)
    with np.errstate(over="ignore"):
        for t in range(steps):
            x = x * a[t] + b[t]
            expected.append(x)
    outputs = compiled([np.float32(0), a, b])
    np.testing.assert_array_equal(outputs[compiled.outputs[1]], np.array(expected, np.float32))


def _compiled_at_max(steps: int):
    """The Scan of x = x * a_t + b_t over `steps` steps converted at max, compiled on CPU in f32."""
    import openvino as ov

    import ov_loops

    conversion = ov_loops.translate(_scan_of_linear_steps(steps), optimize="max")
    assert any("linear recurrence" in note for note in conversion.loops[0].optimizations)
    config = {"INFERENCE_PRECISION_HINT": "f32"}
    return ov.Core().compile_model(conversion.model, "CPU", config)


def _loop_values(x0, a, b):
    """The loop's own values in f32: x_t = x_{t-1} * a_t + b_t, x_1 .. x_T."""
    import numpy as np

    x, values = np.float32(x0), []
    with np.errstate(all="ignore"):
        for factor, term in zip(a, b):
            x = np.float32(x * factor) + term
            values.append(x)
    return np.array(values, np.float32)


@pytest.mark.parametrize(
    "x0, factor",
    [(1e-30, 2.0), (1e38, 0.5)],
    ids=["a product overflows before a tiny state", "a product underflows before a huge state"],
)
def test_a_product_leaving_f32_runs_the_loop_instead(x0, factor):
    """2**200 overflows f32 but 1e-30 * 2**t stays finite in the loop (the solved recurrence
    had inf); 0.5**200 underflows to 0 but 1e38 * 0.5**t is 6e-23 at t = 200 (it had 0)."""
    import numpy as np

    steps = 200
    compiled = _compiled_at_max(steps)
    a, b = np.full(steps, factor, np.float32), np.zeros(steps, np.float32)
    outputs = compiled([np.float32(x0), a, b])
    expected = _loop_values(x0, a, b)
    np.testing.assert_allclose(outputs[compiled.outputs[1]], expected, rtol=1e-6, atol=0)
    np.testing.assert_allclose(outputs[compiled.outputs[0]], expected[-1], rtol=1e-6, atol=0)


SPECIAL = (0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-38, 1e-44, 1.0, -1.0)
SCALES = (1e-30, 1e-6, 1e-2, 1.0, 10.0, 1e6, 1e30)


def _fuzz_values(rng, count: int, around_one: bool):
    """`count` f32 values: normal draws times a scale drawn per sequence (near 1 for the
    coefficients half the time), a special value (0, +-inf, NaN, huge, tiny, subnormal) at a
    few random places."""
    scale = 1.0 if around_one and rng.random() < 0.5 else rng.choice(SCALES)
    values = rng.standard_normal(count) * scale
    if around_one and scale == 1.0:
        values = 1.0 + values * rng.choice((1e-3, 0.1, 1.0))
    specials = rng.random(count) < rng.choice((0.0, 0.01, 0.1))
    values[specials] = rng.choice(SPECIAL, int(specials.sum()))
    return values.astype(np.float32)


@pytest.mark.parametrize("steps", [2, 7, 60, 200])
def test_fuzz_solved_recurrences_agree_with_the_loop(steps):
    """Random a, b, x0 (0, +-inf, NaN, huge, tiny and subnormal values among them) at max: where
    the loop in f32 gives inf or NaN the converted model gives the same; elsewhere a finite
    value within the rounding of either computation, (T + 64) eps S_t with S_t the loop on
    |a|, |b|, |x0| in f64 (the bound on a sum's rounding), and T 2^-60 (what the solved values
    may lose where a product underflows, passes/linear_recurrences.py)."""
    compiled = _compiled_at_max(steps)
    rng = np.random.default_rng(steps)
    eps = np.finfo(np.float32).eps
    for case in range(150):
        a, b = _fuzz_values(rng, steps, True), _fuzz_values(rng, steps, False)
        x0 = _fuzz_values(rng, 1, False)[0]
        got = compiled([x0, a, b])[compiled.outputs[1]]
        want = _loop_values(x0, a, b)
        with np.errstate(all="ignore"):
            size = _loop_values(abs(np.float64(x0)), np.abs(a.astype(np.float64)), np.abs(b))
            bound = (steps + 64) * eps * size.astype(np.float64) + steps * 2.0**-60
        where = f"case {case}: x0 {x0}, a {a.tolist()}, b {b.tolist()}"
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=where)
        assert np.isfinite(got[finite]).all(), where
        error = np.abs(got[finite].astype(np.float64) - want[finite])
        assert (error <= bound[finite]).all(), (where, error.max())
