"""Output shapes as static as OpenVINO's own frontend makes them (issue 22 item 3).

A loop over a dynamic batch B whose body computes [B, 8] stacks [T, B, 8]: `convert_model`
declares [?,?,8]. The guard that empties a stacked output when the loop may run zero times
reshapes it to a run-time shape, which left [?,?,?]; it now keeps the dims that are static on
both sides (the stacked value's and the empty shape's).
"""

from __future__ import annotations

import numpy as np
import openvino as ov
import pytest

import ov_loops
from tests.harness import assert_matches_onnxruntime, write
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

LEVELS = ("none", "default", "max")


def _stacking_loop() -> object:
    """h = tanh(h @ W + 1) for M (an input) iterations over h0 [B, 8], each h stacked."""
    body = loop_body(
        [
            node("MatMul", ["h_in", "w"], ["hw"]),
            node("Add", ["hw", "one"], ["pre"]),
            node("Tanh", ["pre"], ["h_out"]),
            node("Identity", ["h_out"], ["h_scan"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [typed("h_in", T.FLOAT, ["B", 8])],
        [typed("go", T.BOOL, []), typed("h_out", T.FLOAT, ["B", 8]), typed("h_scan")],
        [const("w", np.eye(8) * 0.5), const("one", 1.0)],
    )
    main = graph(
        [node("Loop", ["M", "", "h0"], ["h", "hs"], body=body)],
        [typed("M", T.INT64, []), typed("h0", T.FLOAT, ["B", 8])],
        [typed("h", T.FLOAT, ["B", 8]), typed("hs", T.FLOAT, ["T", "B", 8])],
    )
    return model(main)


def _shapes(converted: ov.Model) -> dict[str, ov.PartialShape]:
    return {o.get_any_name(): o.get_partial_shape() for o in converted.outputs}


@pytest.mark.parametrize("level", LEVELS)
def test_stacked_output_of_a_loop_that_may_run_zero_times_keeps_its_static_dims(level, tmp_path):
    made = _stacking_loop()
    theirs = _shapes(ov.convert_model(str(write(tmp_path, made))))
    ours = _shapes(ov_loops.translate(made, optimize=level).model)
    assert theirs["hs"] == ov.PartialShape([-1, -1, 8])
    assert ours == theirs


def test_stacked_output_with_static_dims_runs_zero_times_after_some(tmp_path):
    """The declared dims change nothing at run time: a zero-iteration run after a run with
    iterations still gives the empty stack [0, B, 8]."""
    rng = np.random.default_rng(0)
    h0 = rng.standard_normal((3, 8)).astype(np.float32)
    runs = [{"M": np.array(count, np.int64), "h0": h0} for count in (4, 0, 2)]
    assert_matches_onnxruntime(_stacking_loop(), runs, tmp_path)
