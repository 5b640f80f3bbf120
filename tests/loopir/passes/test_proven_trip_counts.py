"""Trip counts proven from execution conditions (loopir/passes/proven_trip_count.py): the
while loops tf2onnx writes for Keras RNNs and tf.scan count to a length that static input
shapes fix; for NPU (static loops, all unrolled) they became refusals ("it may stop early",
issue 22 item 9). Real exports of the corpus, converted with static `--input` shapes for NPU,
run on the CPU against the framework's outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ov_loops
from ov_loops.checking.device import run
from ov_loops.errors import UnsupportedError
from tests.harness import assert_close, assert_one_line_error, compile_f32, run_cli

CORPUS = Path(__file__).resolve().parents[2] / "models" / "exporters"


def _static(name: str) -> tuple[dict[str, np.ndarray], dict[str, list[int]]]:
    feeds = dict(np.load(CORPUS / f"{name}.inputs.npz"))
    return feeds, {key: list(value.shape) for key, value in feeds.items()}


@pytest.mark.parametrize(
    "name", ["tf_keras_simple_rnn_last", "tf_keras_gru_reset_after", "tf_scan_cumulative"]
)
def test_a_tf2onnx_while_loop_with_static_shapes_is_unrolled_for_npu(name):
    feeds, shapes = _static(name)
    conversion = ov_loops.translate(CORPUS / f"{name}.onnx", input=shapes, target="NPU")
    assert [loop.becomes for loop in conversion.loops] == ["straight-line graph"]
    expected = dict(np.load(CORPUS / f"{name}.expected.npz"))
    compiled = compile_f32(conversion.model)
    got = run(compiled, feeds)
    names = [next(iter(output.get_names())) for output in compiled.outputs]
    for index, output in enumerate(names):
        assert_close(expected[output], got[index], f"{name}: {output}", 1e-4, 1e-5)


def test_a_loop_whose_condition_reads_data_is_still_refused_for_npu():
    """Newton's iteration stops when it converges: its count depends on the input's value."""
    _, shapes = _static("tf_while_loop_newton")
    with pytest.raises(UnsupportedError) as raised:
        ov_loops.translate(CORPUS / "tf_while_loop_newton.onnx", input=shapes, target="NPU")
    message = str(raised.value)
    assert "\n" not in message and "main/while_loop" in message
    assert "NPU needs static loops" in message and "until its condition is false" in message
    assert "--max_trip_count N bounds it" in message


@pytest.mark.parametrize(
    "name", ["tf_while_loop_newton", "jax_while_loop_newton_sqrt", "torch_dynamo_while_converge"]
)
def test_a_loop_whose_condition_reads_data_runs_for_npu_bounded_by_max_trip_count(name):
    """With --max_trip_count the bounded while loop lowers for NPU, its run-time initial
    condition too (the Loop-5 starts true; the zero-iteration guards take a false one): it was
    refused, "its initial condition is a run-time value" (issue 22 item 9)."""
    feeds, shapes = _static(name)
    model = ov_loops.convert(CORPUS / f"{name}.onnx", input=shapes, target="NPU", max_trip_count=60)
    compiled = compile_f32(model)
    got = run(compiled, feeds)
    expected = dict(np.load(CORPUS / f"{name}.expected.npz"))
    names = [next(iter(output.get_names())) for output in compiled.outputs]
    for index, output in enumerate(names):
        assert_close(expected[output], got[index], f"{name}: {output}", 1e-4, 1e-5)


def test_a_while_loop_with_stacked_outputs_is_refused_saying_a_bound_would_not_help():
    """TorchScript's `while` appending to a list: --max_trip_count leaves it refused (its
    stacked outputs' length depends on where it stops), so the refusal does not offer it."""
    _, shapes = _static("torch_ts_while_break_append")
    with pytest.raises(UnsupportedError) as raised:
        ov_loops.translate(CORPUS / "torch_ts_while_break_append.onnx", input=shapes, target="NPU")
    assert "--max_trip_count N would not help: its stacked outputs' length" in str(raised.value)


def test_a_torchscript_loop_counted_by_an_input_is_refused_naming_the_input():
    """TorchScript names nodes `/Loop` (the path `main//Loop`): the loop was taken for a
    nested one, and the refusal said its count "depends on run-time values of the enclosing
    graph"; it names the input now."""
    with pytest.raises(UnsupportedError) as raised:
        ov_loops.translate(
            CORPUS / "torch_ts_count_input.onnx", input={"x": [2, 3], "n": []}, target="NPU"
        )
    assert "depends on the run-time value of input 'n'" in str(raised.value)


def _runs(name: str, conversion: ov_loops.Conversion) -> dict[str, np.ndarray]:
    compiled = compile_f32(conversion.model)
    got = run(compiled, dict(np.load(CORPUS / f"{name}.inputs.npz")))
    return {next(iter(output.get_names())): value for output, value in zip(compiled.outputs, got)}


def test_a_while_loop_bounded_by_max_trip_count_is_unrolled_for_npu():
    """onnxscript's Newton iteration (no trip count, runs until it converges): refused for NPU;
    with `max_trip_count=32` it is a loop of at most 32 iterations, unrolled with each copy
    masked by the condition, and it converges within them."""
    name = "onnxscript_while_newton"
    _, shapes = _static(name)
    conversion = ov_loops.translate(
        CORPUS / f"{name}.onnx", input=shapes, target="NPU", max_trip_count=32
    )
    assert [loop.becomes for loop in conversion.loops] == ["straight-line graph"]
    expected = dict(np.load(CORPUS / f"{name}.expected.npz"))
    got = _runs(name, conversion)
    for output, want in expected.items():
        assert_close(want, got[output], f"{name}: {output}", 1e-4, 1e-5)


@pytest.mark.parametrize("most, steps", [(64, 13), (5, 5)])
def test_max_trip_count_stops_a_while_loop_after_that_many_iterations(most, steps):
    """A TorchScript loop to convergence (13 iterations on these inputs) counts its steps (k):
    a bound above them changes nothing, a bound below stops it there (the user vouches for the
    bound; the model then computes something else)."""
    name = "torch_ts_while_converge"
    conversion = ov_loops.translate(CORPUS / f"{name}.onnx", max_trip_count=most)
    assert int(_runs(name, conversion)["k"]) == steps
    assert f"trip count constant {most}" in conversion.loops[0].summary()


def test_max_trip_count_must_be_a_count(tmp_path):
    result = run_cli(
        "convert", str(CORPUS / "torch_ts_while_converge.onnx"), "-o", str(tmp_path / "m.xml"),
        "--max_trip_count", "-1",
    )  # fmt: skip
    assert_one_line_error(result, 2, "max_trip_count must be a non-negative integer, got -1")
    assert not list(tmp_path.iterdir())
