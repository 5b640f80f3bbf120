"""SumOuterProductsAfterLoop: a carried sum of a_t^T b_t becomes the stack of [a_t, b_t] and one
product after the loop (the IR-reference oracle of every pass, zero runs included, is in
test_passes.py)."""

from __future__ import annotations

import openvino.opset15 as ops

from ov_loops.contract.spec import ConcatenatedOutput
from ov_loops.loopir.passes.outer_products import AddStackedProducts, SumOuterProductsAfterLoop
from tests.loopir_scenarios import (
    accumulator_grown_by_concat,
    outer_products_of_two_rows_summed,
    outer_products_summed,
)


def test_a_sum_of_outer_products_leaves_the_loop_as_a_stack_of_its_rows():
    loop, _, _ = outer_products_summed()
    after = SumOuterProductsAfterLoop()(loop)
    assert len(after.spec.merged_inputs) == 1 and len(loop.spec.merged_inputs) == 2
    (stacked,) = after.spec.concatenated_outputs
    assert (stacked.axis, stacked.part_size) == (0, 1)
    assert list(after.body_value(stacked.body_result).get_partial_shape()) == [1, 5]
    (result,) = [r for r in after.results if r.port == stacked.external_port]
    (step,) = result.after
    assert isinstance(step, AddStackedProducts) and (step.columns, step.rows) == (3, 1)
    assert [value.name for value in after.carried] == ["carried1"]
    assert after.applied == ("summed 1 carried outer product(s) after the loop",)


def test_products_of_two_rows_are_stacked_with_an_axis_of_their_own():
    loop, _, _ = outer_products_of_two_rows_summed()
    after = SumOuterProductsAfterLoop()(loop)
    (stacked,) = after.spec.concatenated_outputs
    assert list(after.body_value(stacked.body_result).get_partial_shape()) == [1, 2, 5]


def test_a_sum_the_body_also_reads_stays_carried():
    loop, _, _ = outer_products_summed()
    acc = loop.body.get_parameters()[1]
    results = list(loop.body.get_results())
    results[1] = ops.result(ops.add(loop.body_value(1), ops.reduce_sum(acc, [0, 1])))
    loop = loop.with_body(results, list(loop.body.get_parameters()))
    assert SumOuterProductsAfterLoop()(loop) is loop


def test_other_carried_values_stay():
    loop, _, _ = accumulator_grown_by_concat()
    assert SumOuterProductsAfterLoop()(loop) is loop
    assert not any(isinstance(e, ConcatenatedOutput) for e in loop.spec.outputs())
