"""SliceGatheredRows: what it does to the LoopIR scenarios (tests/loopir/passes/test_passes.py
runs every scenario through the IR reference before and after it), and what it opens up for
jax2onnx's flax RNNs with a symbolic batch and time: the cell lowering at "max"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.contract.spec import TRIP_COUNT_CONSTANT, TRIP_COUNT_INPUT
from ov_loops.loopir.passes.gathered_slices import SliceGatheredRows
from tests.harness import assert_matches_onnxruntime
from tests.loopir.passes.test_passes import _assert_keeps_results
from tests.loopir_scenarios import gathered_rows

EXPORTS = Path(__file__).resolve().parents[2] / "models" / "exporters"


def _op_types(loop) -> list[str]:
    return [op.get_type_name() for op in loop.body.get_ordered_ops()]


def test_a_row_read_at_the_iteration_becomes_a_sliced_input():
    loop, _, _ = gathered_rows(4, True, None)
    after = SliceGatheredRows()(loop)
    assert "Gather" not in _op_types(after)
    (sliced,) = after.spec.sliced_inputs
    assert (sliced.axis, sliced.start, sliced.stride, sliced.part_size, sliced.end) == (
        0,
        0,
        1,
        1,
        -1,
    )
    assert after.spec.trip_count_source == TRIP_COUNT_INPUT and after.trip.runtime
    assert len(after.spec.invariant_inputs) == 1  # xs is still given back as it is
    assert after.applied == ("read 1 gathered row(s) as sliced input(s)",)


def test_a_constant_trip_count_stays_a_constant_below_static_rows():
    loop, _, _ = gathered_rows(3, False, 4)
    after = SliceGatheredRows()(loop)
    assert len(after.spec.sliced_inputs) == 1
    assert after.spec.trip_count_source == TRIP_COUNT_CONSTANT
    assert after.trip.constant == after.spec.trip_count == 3


def test_a_row_no_matmul_reads_is_left_alone():
    """Sliced, it would cost a back-edge copy and open up neither cells nor hoisting."""
    loop, _, _ = gathered_rows(4, True, None, projected=False)
    assert SliceGatheredRows()(loop) is loop


def test_a_constant_trip_count_over_dynamic_rows_is_left_alone():
    """Capping it at the rows would make it a runtime count (unrolling needs a constant)."""
    loop, _, _ = gathered_rows(3, False, None)
    assert SliceGatheredRows()(loop) is loop


@pytest.mark.parametrize("count", [0, 4])
def test_the_cap_keeps_the_results(count, tmp_path):
    _assert_keeps_results(
        SliceGatheredRows(),
        f"gathered_rows_runtime_trip_count{'_zero' if not count else ''}",
        tmp_path,
    )


FLAX_CELLS = {
    "jax_linen_lstm_carry_in": ["LSTMSequence-5"],
    "jax_linen_gru_carry_in": ["GRUSequence-5"],
    "jax_linen_simple_carry_in": ["RNNSequence-5"],
    "jax_linen_stacked_gru_lstm": ["GRUSequence-5", "LSTMSequence-5"],
}


@pytest.mark.parametrize("name", sorted(FLAX_CELLS))
def test_flax_rnns_with_symbolic_dims_become_sequence_ops_at_max(name, tmp_path):
    """jax2onnx's Loop reads x[i] with a Gather of the carried, unchanged x and gives back its
    weights and x unchanged: the weights become body Constants, x a sliced input, and the loop
    the cell's *Sequence op, with B and T left symbolic; checked against onnxruntime at two
    sizes."""
    model = onnx.load(str(EXPORTS / f"{name}.onnx"))
    rng = np.random.default_rng(3)
    runs = []
    for batch, steps in ((2, 5), (3, 1)):
        feeds = {"x": rng.standard_normal((batch, steps, 4)).astype(np.float32)}
        for carried in ("c0", "h0"):
            if any(value.name == carried for value in model.graph.input):
                feeds[carried] = rng.standard_normal((batch, 8)).astype(np.float32)
        runs.append(feeds)
    conversion = assert_matches_onnxruntime(model, runs, tmp_path, optimize="max")
    assert [loop.becomes for loop in conversion.loops] == FLAX_CELLS[name]


def test_flax_lstm_weights_become_body_constants_at_default():
    """The weights jax2onnx carries unchanged through its Loop are invariant inputs fed by
    Constants once RemoveDeadValues has run; inlined again, every MatMul reads a Constant (the
    8 per-gate products, merged by MergeSharedMatMuls into one of x and one of h)."""
    conversion = ov_loops.translate(EXPORTS / "jax_linen_lstm_carry_in.onnx")
    (loop,) = [op for op in conversion.model.get_ordered_ops() if op.get_type_name() == "Loop"]
    matmuls = [op for op in loop.get_function().get_ordered_ops() if op.get_type_name() == "MatMul"]
    assert len(matmuls) == 2
    assert all(op.input_value(1).get_node().get_type_name() == "Constant" for op in matmuls)
