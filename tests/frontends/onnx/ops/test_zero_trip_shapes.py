"""The shape of a stacked output after zero trips when the loop is fed a symbolic batch and its
body declares a static one: onnxruntime's Loop gives [0, *the body's declared dims] (0 for a
symbolic dim), so [0, 2, 8] here; ov-loops gave [0, 0, 8] at every level (the converted body
is typed from the arriving values, whose batch is dynamic)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.rnn_loop import rnn_loop_model
from ov_loops.conversion.driver import Converter
from ov_loops.frontends.onnx.load.load import load_model
from ov_loops.loopir.passes.pipeline import CPU, RECOGNIZE_CELLS, LoweringOptions
from tests.harness import assert_matches_onnxruntime, compile_f32, onnxruntime_oracle, run

ROWS = 2


def _rnn_declaring_its_batch():
    """The bench RNN over X [T, B, 8] from h0 [B, 8], B symbolic outside, 2 in the body."""
    made = rnn_loop_model(8, batch="B")
    body = made.graph.node[-1].attribute[0].g
    for declared in [*body.input[2:], *body.output[1:]]:
        declared.type.tensor_type.shape.dim[0].dim_value = ROWS
    return made


def _feeds(steps: int, rng) -> dict[str, np.ndarray]:
    return {
        "X": rng.standard_normal((steps, ROWS, 8)).astype(np.float32),
        "h0": rng.standard_normal((ROWS, 8)).astype(np.float32),
    }


@pytest.mark.parametrize("optimize", ["none", "default", "max"])
def test_zero_trips_stack_in_the_bodys_declared_shape(optimize, tmp_path):
    rng = np.random.default_rng(0)
    runs = [_feeds(steps, rng) for steps in (0, 5, 0, 3)]
    assert_matches_onnxruntime(_rnn_declaring_its_batch(), runs, tmp_path, optimize=optimize)


def test_zero_trips_of_the_split_loop_stack_in_the_declared_shape():
    """At max without cells the loop becomes two Loop-5s (lower/remainder.py)."""
    made = _rnn_declaring_its_batch()
    profile = CPU.replace(skips=frozenset({RECOGNIZE_CELLS.name}))
    options = LoweringOptions(profile).replace(optimize="max")
    conversion = Converter(load_model(made), options).convert()
    assert any("second Loop-5" in done for done in conversion.loops[0].optimizations)
    compiled, expect = compile_f32(conversion.model), onnxruntime_oracle(made)
    rng = np.random.default_rng(1)
    for steps in (0, 9, 0, 2):
        feeds = _feeds(steps, rng)
        got, want = run(compiled, feeds), expect(feeds)
        assert [g.shape for g in got] == [w.shape for w in want], f"T={steps}"
