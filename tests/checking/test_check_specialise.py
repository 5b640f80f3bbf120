"""`ov-loops check --specialise`: the device runs the model specialised to the check's inputs
(an .onnx converted with them as --input, an .xml reshaped), compared with the references of
the model as given."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ov_loops
from ov_loops.errors import InputError
from tests.harness import assert_one_line_error, run_cli

EXPORTS = Path(__file__).resolve().parents[1] / "models" / "exporters"
LSTM = EXPORTS / "jax_linen_lstm_carry_in.onnx"


def test_an_onnx_model_runs_converted_for_the_generated_shapes() -> None:
    shapes = {"x": (1, 40, 4), "c0": (1, 8), "h0": (1, 8)}
    report = ov_loops.check(LSTM, shapes=shapes, optimize="max", specialise=True)
    assert report.ok
    assert (
        "specialised: the device ran the model converted for inputs "
        "x[1,40,4]{f32},c0[1,8]{f32},h0[1,8]{f32}" in report.notes
    )
    assert [output.shape for output in report.outputs] == [(1, 8), (1, 8), (1, 40, 8)]


def test_an_ir_runs_reshaped_to_the_inputs_given(tmp_path: Path) -> None:
    xml = tmp_path / "gru.xml"
    ov_loops.save(ov_loops.convert(EXPORTS / "jax_linen_gru_carry_init.onnx"), xml)
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, x=np.random.default_rng(1).normal(size=(3, 20, 4)).astype(np.float32))
    result = run_cli("check", str(xml), "--specialise", "--inputs", str(inputs))
    assert result.returncode == 0, result.stderr
    assert "note: specialised: the device ran the model reshaped to inputs x[3,20,4]{f32}" in (
        result.stdout
    )


def test_without_it_there_is_no_note() -> None:
    report = ov_loops.check(LSTM, shapes={"x": (1, 4, 4), "c0": (1, 8), "h0": (1, 8)})
    assert report.ok and not any(note.startswith("specialised") for note in report.notes)


def test_inputs_giving_one_symbol_two_lengths_are_bad_input(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs.npz"
    rows = np.zeros((2, 8), np.float32)
    np.savez(inputs, x=np.zeros((3, 5, 4), np.float32), c0=rows, h0=rows)
    result = run_cli("check", str(LSTM), "--specialise", "--inputs", str(inputs))
    assert_one_line_error(
        result,
        2,
        "inputs x[3,5,4]{f32},c0[2,8]{f32},h0[2,8]{f32}: dim B is 3 in input 'x' and 2 in "
        "input 'c0': the model declares them one length",
    )


def test_it_cannot_go_with_chunks() -> None:
    with pytest.raises(InputError, match="--specialise cannot be combined with --chunks"):
        ov_loops.check(LSTM, chunks="x:1=2", specialise=True)
