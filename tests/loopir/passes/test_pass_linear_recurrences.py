"""SolveLinearRecurrences: a loop of scalar steps whose carried values are linear recurrences
becomes one iteration over whole sequences (the IR-reference oracle of every pass is in
test_passes.py: the scenarios below compute the same before and after it)."""

from __future__ import annotations

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
    assert after.applied == (f"solved 3 linear recurrence(s) over {steps} steps",)
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
