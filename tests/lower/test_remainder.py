"""A loop with a runtime trip count and dynamic shapes as two Loop-5s (lower/remainder.py): the
first unrolled by k without masks over m = k * (n // k) iterations, the second over the rest.

Device-free: the IR reference of the split loop against that of the loop as it is, for every
trip count from 0 to 2k + 1 (zero trips; a first loop of no iteration, of k and of 2k; second
loops of 1 .. k iterations), read forward and from the end. On the CPU:
one compiled model, runs whose trip count and batch change from run to run.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops.lower.remainder as remainder
from benchmarks.rnn_loop import rnn_loop_model
from ov_loops.conversion.driver import Converter
from ov_loops.frontends.onnx.load.load import load_model
from ov_loops.loopir.passes.pipeline import CPU, GPU, RECOGNIZE_CELLS, LoweringOptions
from ov_loops.loopir.passes.unroll_iterations import body_size
from ov_loops.lower.loop5 import lower_to_loop5
from ov_loops.lower.select import lower
from ov_loops.ovgraph import all_ops
from tests.harness import assert_close, compile_f32, run
from tests.loopir.passes.test_passes import _reference_outputs, _saved
from tests.loopir_scenarios import batch_loop, unrolling_loop

FACTOR = 4
LONGEST = 2 * FACTOR + 1
MAX = LoweringOptions(CPU, "max")


@pytest.fixture(autouse=True)
def factor_four(monkeypatch):
    """k = 4 (the body's size would give 16): fewer trip counts cover every remainder."""
    monkeypatch.setattr(LoweringOptions, "unroll_factor", lambda options, loop: FACTOR)


def _expected(feeds: dict, backward: bool, tmp_path) -> list[np.ndarray]:
    """The loop as it is (one Loop-5, not unrolled) through the IR reference."""
    plain, parameters, _ = unrolling_loop(LONGEST, True, backward=backward, rows=3)
    path = tmp_path / "plain.xml"
    return _reference_outputs(lower_to_loop5(plain), parameters, feeds, path)


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_every_remainder_and_zero_trips_match_the_loop(backward: bool, tmp_path):
    loop, parameters, feeds = unrolling_loop(LONGEST, True, backward=backward, rows=3)
    lowered = lower(loop, MAX)
    why = f"no masks (dynamic shapes): the remainder n mod {FACTOR} in a second Loop-5"
    assert why in lowered.applied
    assert f"unrolled x{FACTOR}" in lowered.applied
    split = _saved(lowered.values, parameters, tmp_path / "split.xml")
    for count in range(LONGEST + 1):
        feeds["M"] = np.array(count, np.int64)
        expected = _expected(feeds, backward, tmp_path)
        got = _reference_outputs(lowered.values, parameters, feeds, split)
        for index, (want, have) in enumerate(zip(expected, got)):
            assert have.shape == want.shape, f"M={count} output {index}"
            assert_close(want, have, f"M={count} output {index}", 1e-6, 1e-6)


def test_two_loops_the_first_in_an_if_and_k_times_the_second(tmp_path):
    loop, parameters, _ = unrolling_loop(LONGEST, True, rows=3)
    size = body_size(loop.body)
    first, _, values = remainder.lower_split(loop, MAX, FACTOR)
    assert first.zero_run_branch  # its runs of no iteration are taken by an If around it
    assert len(values) == len(loop.results)
    model = ov.Model([ops.result(value) for value in values], parameters)
    loops = [op for op in all_ops(model) if op.get_type_name() == "Loop"]
    sizes = sorted(body_size(op.get_function()) for op in loops)
    assert len(loops) == 2 and sizes[0] <= size + 2 and sizes[1] >= FACTOR * size


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: unrolling_loop(9, True, stop_after=6, rows=3), id="early exit"),
        pytest.param(lambda: unrolling_loop(9, True), id="static shapes: masked instead"),
        pytest.param(lambda: unrolling_loop(9, False, rows=3), id="constant trip count"),
        pytest.param(lambda: batch_loop(grows=True), id="a carried value changes shape"),
    ],
)
def test_loops_it_does_not_split(build):
    loop, _, _ = build()
    assert remainder.split_factor(loop, MAX) is None
    assert remainder.split_factor(unrolling_loop(9, True, rows=3)[0], MAX) == FACTOR


def test_not_split_below_max_nor_where_loops_unroll_whole():
    loop, _, _ = unrolling_loop(9, True, rows=3)
    assert remainder.split_factor(loop, LoweringOptions(CPU, "default")) is None
    assert remainder.split_factor(loop, LoweringOptions(GPU, "max")) is None


def test_early_exit_with_dynamic_shapes_stays_one_loop_and_matches(tmp_path):
    loop, parameters, feeds = unrolling_loop(9, True, stop_after=6, rows=3)
    lowered = lower(loop, MAX)
    assert not any("remainder" in done for done in lowered.applied)
    plain, parameters_plain, _ = unrolling_loop(9, True, stop_after=6, rows=3)
    want = _reference_outputs(lower_to_loop5(plain), parameters_plain, feeds, tmp_path / "a.xml")
    got = _reference_outputs(lowered.values, parameters, feeds, tmp_path / "b.xml")
    for index, (expected, actual) in enumerate(zip(want, got)):
        assert_close(expected, actual, f"output {index}", 1e-6, 1e-6)


RUNS = [(9, 3), (2, 2), (0, 2), (4, 3), (3, 1), (8, 2), (0, 4), (5, 3), (1, 1), (9, 2)]


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_on_the_cpu_with_changing_trip_counts_and_batches(backward: bool, tmp_path):
    """(trip count, rows) change between runs of one compiled model."""
    loop, parameters, feeds = unrolling_loop(LONGEST, True, backward=backward, rows=3)
    lowered = lower(loop, MAX)
    compiled = compile_f32(_saved(lowered.values, parameters, tmp_path / "split.xml"))
    for count, rows in RUNS:
        feeds["M"] = np.array(count, np.int64)
        feeds["acc0"] = np.linspace(-1, 1, 2 * rows, dtype=np.float32).reshape(rows, 2)
        expected = _expected(feeds, backward, tmp_path)
        got = run(compiled, feeds)
        for index, (want, have) in enumerate(zip(expected, got)):
            assert_close(want, have, f"M={count} rows={rows} output {index}", 1e-5, 1e-5)


def test_an_rnn_of_symbolic_batch_on_the_cpu_with_changing_lengths_and_batches():
    """The bench RNN (h = tanh(x W + h R + b), H = 8) with a symbolic batch, kept a Loop-5 at
    max: lengths and batches change between runs of one compiled model. A first Loop of no
    iteration right after a run of several with another batch, (37, 3) then (3, 2), returned
    every output of the inference stale on the CPU (OpenVINO 2026.4.1) until that Loop went
    into an If (docs/pitfalls.md)."""
    made = rnn_loop_model(8, batch="B")
    options = LoweringOptions(CPU.replace(skips=frozenset({RECOGNIZE_CELLS.name})))
    options = options.replace(optimize="max")
    conversion = Converter(load_model(made), options).convert()
    (loop,) = conversion.loops
    assert any("second Loop-5" in done for done in loop.optimizations)
    compiled = compile_f32(conversion.model)
    session = ort.InferenceSession(made.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for steps, rows in [(37, 3), (3, 2), (16, 2), (0, 2), (20, 1), (0, 3), (5, 4), (33, 2)]:
        feeds = {
            "X": rng.standard_normal((steps, rows, 8)).astype(np.float32),
            "h0": rng.standard_normal((rows, 8)).astype(np.float32),
        }
        expected = session.run(None, feeds)
        got = run(compiled, feeds)
        assert_close(expected[0], got[0], f"T={steps} B={rows} h_last", 1e-5, 1e-5)
        if steps:
            assert_close(expected[1], got[1], f"T={steps} B={rows} hs", 1e-5, 1e-5)
