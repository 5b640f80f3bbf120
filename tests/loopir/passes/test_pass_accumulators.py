"""StackAccumulators: a carried value only extended by Concat becomes a concatenated output
(the IR-reference oracle of every pass is in test_passes.py)."""

from __future__ import annotations

import numpy as np
import openvino as ov

import ov_loops
from ov_loops.contract.spec import ConcatenatedOutput
from ov_loops.loopir.passes.accumulators import StackAccumulators
from ov_loops.loopir.steps import PrependInitial
from tests.harness import assert_matches_onnxruntime
from tests.loopir_scenarios import (
    accumulator_also_read_in_the_body,
    accumulator_grown_by_concat,
    accumulator_grown_by_two_rows,
)


def test_an_appended_carried_value_becomes_a_concatenated_output():
    loop, _, _ = accumulator_grown_by_concat()
    after = StackAccumulators()(loop)
    assert len(after.spec.merged_inputs) == 1 and len(loop.spec.merged_inputs) == 2
    (stacked,) = after.spec.concatenated_outputs
    assert (stacked.axis, stacked.part_size, stacked.stride) == (0, 1, 1)
    (result,) = [r for r in after.results if r.port == stacked.external_port]
    assert [type(step) for step in result.after] == [PrependInitial]
    assert [value.name for value in after.carried] == ["carried1"]
    assert after.applied == ("stacked 1 appended carried value(s)",)


def test_parts_of_two_rows_are_stacked_with_an_axis_of_their_own():
    """Loop-5 takes part_size 1 only ("Invalid start, stride, part_size, or end attribute values
    in Loop op" for 2, issue 20): the [2, 2] part leaves the body as [1, 2, 2], and the stack
    [count, 2, 2] becomes [2 * count, 2] before the initial value is prepended."""
    loop, _, _ = accumulator_grown_by_two_rows()
    after = StackAccumulators()(loop)
    (stacked,) = after.spec.concatenated_outputs
    assert (stacked.axis, stacked.part_size, stacked.stride) == (0, 1, 1)
    assert list(after.body_value(stacked.body_result).get_partial_shape()) == [1, 2, 2]
    (result,) = [r for r in after.results if r.port == stacked.external_port]
    (step,) = result.after
    assert isinstance(step, PrependInitial) and step.rows == 2
    # The stack's shape after zero iterations is a value the zero-run If can read (a Node made
    # the lowering fail: "'openvino.Node' object has no attribute 'get_node'", fuzz seed
    # 2700400194 at default and max).
    assert isinstance(result.empty_shape, ov.Output)
    assert list(result.empty_shape.get_partial_shape()) == [3]


def test_an_accumulator_read_by_the_body_stays_carried():
    loop, _, _ = accumulator_also_read_in_the_body()
    assert StackAccumulators()(loop) is loop


def _while_loop_collecting_rows():
    """A tf2onnx-style while loop collecting h in a Concat accumulator (benchmarks/loop_models)."""
    from benchmarks.loop_models import loop_model

    return loop_model("rnn", "tf_concat", 4, 2)


def test_a_while_loop_collecting_rows_matches_onnxruntime_with_zero_runs(tmp_path):
    from benchmarks.loop_models import loop_feeds

    made = _while_loop_collecting_rows()
    made = made[0] if isinstance(made, tuple) else made
    runs = []
    for steps in (3, 0, 5):
        feeds = loop_feeds("rnn", 4, 2, max(steps, 1))
        feeds["X"] = feeds["X"][:steps]
        runs.append(feeds)
    conversion = assert_matches_onnxruntime(made, runs, tmp_path)
    (loop,) = conversion.loops
    assert "stacked 1 appended carried value(s)" in loop.optimizations
    assert any(isinstance(e, ConcatenatedOutput) for e in loop.spec.concatenated_outputs)
    plain = ov_loops.translate(made, optimize="none").loops[0]
    assert not plain.spec.concatenated_outputs and np.size(plain.spec.merged_inputs) == 3
