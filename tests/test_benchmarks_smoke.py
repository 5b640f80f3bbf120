"""The loops of benchmarks/loops.py, tiny: valid ONNX, and ov-loops agrees with onnxruntime.

No timing: this keeps the model builders (benchmarks/loop_models.py) and the benchmark's
plumbing honest.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from benchmarks import loops, rnn256
from benchmarks.loop_models import CELLS, FORMS, loop_feeds, loop_model

HIDDEN, BATCH, STEPS = 4, 2, 3


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("cell", sorted(CELLS))
def test_loop_matches_onnxruntime_at_every_level(cell: str, form: str) -> None:
    model = loop_model(cell, form, HIDDEN, BATCH)
    onnx.checker.check_model(model, full_check=True)
    feeds = loop_feeds(cell, HIDDEN, BATCH, STEPS)
    outputs = [output.name for output in model.graph.output]
    expected = loops.onnxruntime_runner(model, outputs, feeds)()
    assert expected[-1].shape == (STEPS, BATCH, HIDDEN)
    for level in loops.LEVELS:
        got = loops.openvino_runner(ov_loops.convert(model, optimize=level), outputs, feeds)()
        for name, want, have in zip(outputs, expected, got):
            np.testing.assert_allclose(
                have, want, rtol=loops.RTOL, atol=loops.ATOL, err_msg=f"{level} {name}"
            )


def test_every_form_and_cell_is_a_row() -> None:
    for rows in (loops.quick_rows(), loops.full_rows()):
        assert {row.form for row in rows} == {*FORMS, loops.EXPORTED}
        assert {row.cell for row in rows} == {*CELLS, *loops.EXPORTS_ROWS}


def test_a_corpus_row_fills_every_column_and_times_the_first_call(tmp_path: Path) -> None:
    settings = argparse.Namespace(conversion_rounds=1, warmup=0, rounds=2, budget=0.0)
    measured = loops.measure_row(
        loops.Row("flax_lstm", loops.EXPORTED, 8, 2, 5), settings, tmp_path
    )
    assert measured.errors == {} and measured.mismatched == []
    assert set(measured.latency) == set(loops.COLUMNS)
    assert measured.first_call is not None and measured.first_call > 0
    row = loops.as_json(measured)
    assert row["ratio_to_onnxruntime"]["specialised"]["median"] > 0
    text = loops.table([measured])
    assert "flax_lstm jax2onnx H=8 B=2 T=5" in text and " ort×" in text


def test_a_measured_row_fills_every_column(tmp_path: Path) -> None:
    settings = argparse.Namespace(conversion_rounds=1, warmup=0, rounds=2, budget=0.0)
    measured = loops.measure_row(
        loops.Row("gru", "tf_concat", HIDDEN, BATCH, STEPS), settings, tmp_path
    )
    assert measured.errors == {} and measured.mismatched == []
    assert {name: len(times) for name, times in measured.latency.items()} == dict.fromkeys(
        loops.COLUMNS, 2
    )
    text = loops.table([measured])
    assert "gru tf_concat H=4 B=2 T=3" in text and "MISMATCH" not in text


def test_a_wrong_column_is_marked_as_a_mismatch(capsys: pytest.CaptureFixture) -> None:
    measured = loops.Measured(loops.Row("rnn", "loop", HIDDEN, BATCH, STEPS))
    calls = {
        "onnxruntime": lambda: [np.zeros(3, np.float32)],
        "max": lambda: [np.full(3, 1e-3, np.float32)],
        "none": lambda: [np.full(3, 1e-6, np.float32)],
    }
    loops.check_outputs(calls, measured)
    assert measured.mismatched == ["max"]
    assert "MISMATCH rnn loop" in capsys.readouterr().err


def test_rounds_fill_the_budget_within_bounds() -> None:
    order: list[str] = []
    calls = {name: lambda name=name: order.append(name) for name in ("a", "b", "c")}
    few = loops.time_rounds(calls, warmup=0, rounds=None, budget=0.0)
    assert [len(times) for times in few.values()] == [loops.MIN_ROUNDS] * 3
    rounds = [order[start : start + 3] for start in range(3, len(order), 3)]  # after warm-up
    assert all(sorted(names) == ["a", "b", "c"] for names in rounds)
    assert len({tuple(names) for names in rounds}) > 1
    many = loops.time_rounds(calls, warmup=1, rounds=None, budget=60.0)
    assert [len(times) for times in many.values()] == [loops.MAX_ROUNDS] * 3


def test_sequence_loops_benchmark_runs_and_prints_ratios(capsys: pytest.CaptureFixture) -> None:
    """benchmarks/sequence_loops.py, tiny: every column agrees with onnxruntime, ratios print."""
    from benchmarks import sequence_loops
    from ov_loops.frontends.onnx.load.checker import check_model

    for form in sequence_loops.FORMS:
        check_model(sequence_loops.list_loop_model(HIDDEN, BATCH, form))
    tiny = ["--hidden", "4", "--steps", "3", "--batch", "2", "--rounds", "2"]
    assert sequence_loops.main(tiny) == 0
    rows = capsys.readouterr().out.strip().splitlines()[2:]
    assert [row.split()[0] for row in rows] == list(sequence_loops.FORMS)
    for row in rows:
        assert "MISMATCH" not in row
        ratios = [float(ratio) for ratio in row.split("   ")[-1].split()]
        assert len(ratios) == 2 * len(sequence_loops.VARIANTS) and all(
            ratio > 0 for ratio in ratios
        )


@pytest.mark.parametrize("variant", ["k16-d-s-m", "k1-d-s", "k8-tb", "k16-d-f16", "k16-par"])
def test_rnn256_step_loops_compute_the_rnn(variant: str) -> None:
    """benchmarks/rnn256.py's hand-built Loop-5s: the RNN's last h and (with s) every h."""
    rng = np.random.default_rng(0)
    hidden, steps = rnn256.HIDDEN, rnn256.STEPS
    projection, recurrent = (
        (rng.standard_normal((hidden, hidden)) / 16).astype(np.float32) for _ in "WR"
    )
    x = rng.standard_normal((steps, 1, hidden)).astype(np.float32)
    made = rnn256.step_model(rnn256.Step.parse(variant), projection, recurrent)
    feeds = {"X": x, "h0": np.zeros((1, hidden), np.float32), "R": recurrent}
    wanted = {p.get_friendly_name() for p in made.get_parameters()}
    got = (
        loops.CORE.compile_model(made, "CPU", rnn256.CONFIG)
        .create_infer_request()
        .infer({name: value for name, value in feeds.items() if name in wanted})
    )
    h, every = feeds["h0"], []
    for t in range(steps):
        h = np.tanh(h @ recurrent + x[t] @ projection)
        every.append(h)
    tolerance = 2e-3 if "f16" in variant else 1e-4  # f16: R rounded to f16
    np.testing.assert_allclose(got[0], h, atol=tolerance)
    if "s" in variant.split("-"):
        np.testing.assert_allclose(got[1], np.stack(every), atol=tolerance)


def test_flax_default_prints_every_column_and_no_mismatch(capsys) -> None:
    """benchmarks/flax_default.py on the flax LSTM, tiny: every column agrees with onnxruntime
    (the floors are not compared: random weights) and is timed."""
    from benchmarks import flax_default

    settings = argparse.Namespace(rounds=1, without=list(flax_default.NEW_PASSES))
    flax_default.measure("jax_linen_lstm_carry_init", 3, 2, settings)
    printed = capsys.readouterr().out
    assert "MISMATCH" not in printed
    for column in ("onnxruntime", "default -2", "B static", "floor packed"):
        assert f"  {column} " in printed


def test_fresh_conversion_runs_the_cli_in_a_fresh_process(tmp_path: Path) -> None:
    """fresh_conversion's `cli` method: `ov-loops convert` measured as ovc is (whole process),
    its peak RSS beside ovc's; the IR it wrote is cleared from the scratch directory."""
    from benchmarks import fresh_conversion

    model = str(fresh_conversion.BENCH_MODELS[0])
    seconds, whole, peak = fresh_conversion.run("cli", model, tmp_path)
    assert seconds == whole and seconds > 0
    assert peak > 50  # MiB: OpenVINO alone is more
    assert not fresh_conversion.FAILED and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("method", ["default", "convert_model"])
def test_fresh_conversion_times_a_python_child_that_imports_nothing_before(
    tmp_path: Path, method: str
) -> None:
    """fresh_conversion's Python methods run in benchmarks/fresh_child.py: the call's seconds
    and the imports' before it, the child's peak RSS, on a model both convert; the IR it wrote
    is cleared."""
    from benchmarks import fresh_conversion

    model = next(path for path in fresh_conversion.BENCH_MODELS if "rnn_stack" in path)
    seconds, whole, peak = fresh_conversion.run(method, model, tmp_path)
    assert 0 < seconds < whole
    assert peak > 50  # MiB: OpenVINO alone is more
    assert not fresh_conversion.FAILED and list(tmp_path.iterdir()) == []
    code = (Path(fresh_conversion.HERE).parent / "fresh_child.py").read_text()
    imports = [line for line in code.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations", "import sys", "import time"]
