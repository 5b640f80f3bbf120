"""MultiplyRowsByInvariants: an invariant matrix times a column becomes a row times the matrix
transposed before the loop (the IR-reference oracle of every pass is in test_passes.py)."""

from __future__ import annotations

from ov_loops.loopir.passes.row_products import MultiplyRowsByInvariants
from tests.loopir_scenarios import invariant_matrix_times_column, linear_recurrences_of_scalars


def _products(loop) -> list[list]:
    return [
        [str(v.get_partial_shape()) for v in node.input_values()]
        for node in loop.body.get_ordered_ops()
        if node.get_type_name() == "MatMul"
    ]


def test_a_matrix_times_a_column_becomes_a_row_times_its_transpose():
    loop, _, _ = invariant_matrix_times_column()
    assert _products(loop) == [["[3,3]", "[3,1]"]] * 2
    after = MultiplyRowsByInvariants()(loop)
    assert _products(after) == [["[1,3]", "[3,3]"]] * 2
    (matrix,) = after.spec.invariant_inputs  # shared by both products; W itself unread
    assert after.outer[matrix.external_port].get_node().get_type_name() == "Transpose"
    assert after.applied == ("multiplied 1 invariant matrix(es) from the left by rows",)


def test_loops_without_such_products_stay():
    loop, _, _ = linear_recurrences_of_scalars()
    assert MultiplyRowsByInvariants()(loop) is loop
