"""`check` reads and writes the files of arrays users bring from their tools: polygraphy's
JSON (--save-inputs / --load-inputs, --save-outputs / --load-outputs) and np.savez archives
with positional arr_N keys (the graph's input or output order).

tests/models/polygraphy/ holds files polygraphy 0.53.6 wrote (not a dependency):
    polygraphy run ir_samples/rnn_scan.onnx --onnxrt --input-shapes X:[5,1,16] h0:[1,16] \\
        --save-inputs rnn_scan.inputs.json --save-outputs rnn_scan.outputs.json
    polygraphy run ir_samples/rnn_scan.onnx --onnxrt --iterations 2 --save-inputs two.inputs.json
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ov_loops
from tests.harness import assert_one_line_error, run_cli

ROOT = Path(__file__).parents[2]
SOURCE = ROOT / "ir_samples" / "rnn_scan.onnx"
POLYGRAPHY = ROOT / "tests" / "models" / "polygraphy"
INPUTS, OUTPUTS = POLYGRAPHY / "rnn_scan.inputs.json", POLYGRAPHY / "rnn_scan.outputs.json"
F32 = {"compress_to_fp16": False}


def _npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as loaded:
        return {name: loaded[name] for name in loaded.files}


def test_polygraphys_inputs_and_onnxruntime_outputs_are_read(tmp_path):
    report = ov_loops.check(
        SOURCE, inputs=INPUTS, load_outputs=OUTPUTS, save_inputs=tmp_path / "i.npz", **F32
    )  # noqa: E501
    assert report.ok, "\n".join(report.lines())
    fed = _npz(tmp_path / "i.npz")
    assert fed["X"].shape == (5, 1, 16) and fed["h0"].shape == (1, 16)


def test_polygraphys_outputs_that_differ_are_a_mismatch(tmp_path):
    data = json.loads(OUTPUTS.read_text())
    iteration = data["lst"][0][1][0]
    other = json.loads(INPUTS.read_text())[0]["h0"]  # an array of h_last's shape, other values
    iteration["outputs"]["h_last"]["values"] = other
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data))
    report = ov_loops.check(SOURCE, inputs=INPUTS, load_outputs=changed, **F32)
    assert not report.ok


def test_check_writes_what_it_reads_back_in_polygraphys_format(tmp_path):
    inputs, outputs = tmp_path / "in.json", tmp_path / "out.json"
    first = ov_loops.check(SOURCE, save_inputs=inputs, save_outputs=outputs, **F32)
    assert first.ok
    data = json.loads(outputs.read_text())
    assert data["polygraphy_class"] == "RunResults" and len(data["lst"]) == 1
    assert json.loads(inputs.read_text())[0]["X"]["polygraphy_class"] == "ndarray"
    again = ov_loops.check(
        SOURCE, inputs=inputs, load_outputs=outputs, save_inputs=tmp_path / "i.npz", **F32
    )  # noqa: E501
    assert again.ok
    assert set(_npz(tmp_path / "i.npz")) == {"X", "h0"}


def test_polygraphy_reads_the_files_check_writes(tmp_path):
    """With polygraphy importable (it is not a dependency): its own loaders read our files."""
    polygraphy_json = pytest.importorskip("polygraphy.json")
    comparator = pytest.importorskip("polygraphy.comparator")
    inputs, outputs = tmp_path / "in.json", tmp_path / "out.json"
    ov_loops.check(SOURCE, save_inputs=inputs, save_outputs=outputs, **F32)
    ov_loops.check(
        SOURCE, save_inputs=tmp_path / "in.npz", save_outputs=tmp_path / "out.npz", **F32
    )  # noqa: E501
    (feed,) = polygraphy_json.load_json(str(inputs))
    for name, array in _npz(tmp_path / "in.npz").items():
        np.testing.assert_array_equal(feed[name], array)
    results = comparator.RunResults.load(str(outputs))
    ((_, (iteration,)),) = results.items()
    for name, array in _npz(tmp_path / "out.npz").items():
        np.testing.assert_array_equal(iteration[name], array)


def test_positional_arr_n_arrays_are_the_graphs_inputs_and_outputs_in_order(tmp_path):
    named = tmp_path / "named.npz"
    report = ov_loops.check(SOURCE, save_inputs=named, save_outputs=tmp_path / "out.npz", **F32)
    fed, out = _npz(named), _npz(tmp_path / "out.npz")
    np.savez(tmp_path / "inputs.npz", fed["h0"], fed["X"])  # the graph's order: h0, X
    np.savez(tmp_path / "outputs.npz", *(out[row.name] for row in report.rows))
    again = ov_loops.check(
        SOURCE, inputs=tmp_path / "inputs.npz", load_outputs=tmp_path / "outputs.npz", **F32
    )
    assert again.ok
    np.savez(tmp_path / "swapped.npz", *reversed([out[row.name] for row in report.rows]))
    swapped = ov_loops.check(SOURCE, inputs=named, load_outputs=tmp_path / "swapped.npz", **F32)
    assert not swapped.ok  # h_last and hs: the other's shape


def test_fewer_positional_inputs_are_the_first_ones_and_the_rest_is_generated(tmp_path):
    np.savez(tmp_path / "h0.npz", np.ones((1, 16), np.float32))
    report = ov_loops.check(SOURCE, inputs=tmp_path / "h0.npz", save_inputs=tmp_path / "i.npz")
    assert report.ok
    np.testing.assert_array_equal(_npz(tmp_path / "i.npz")["h0"], np.ones((1, 16), np.float32))


def _runners(tmp_path: Path) -> Path:
    data = json.loads(OUTPUTS.read_text())
    data["lst"].append(["trt-runner-N0", data["lst"][0][1]])
    path = tmp_path / "runners.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "option, make, fragment",
    [
        ("--inputs", lambda d: POLYGRAPHY / "two.inputs.json", "2 iterations in the file"),
        ("--load-outputs", _runners, "polygraphy results of 2 runners (onnxrt-runner-N0-"),
        ("--inputs", lambda d: _text(d, "{"), "not JSON"),
        ("--inputs", lambda d: _text(d, '[{"X": [1, 2]}]'), "'X' is not an array in polygraphy"),
        ("--inputs", lambda d: _text(d, '[{"X": {"tensor": "AA=="}}]'), "'X' is a torch tensor"),
        ("--inputs", lambda d: _text(d, '[{"X": {"array": "AAAA"}}]'), "'X' cannot be read"),
        ("--inputs", lambda d: _text(d, "3"), "not polygraphy's JSON of arrays"),
        ("--inputs", lambda d: _arrays(d, 3), "3 unnamed arrays (arr_0 ... arr_2, by position)"),
        ("--load-outputs", lambda d: _arrays(d, 3), "for the model's 2 outputs: h_last, hs"),
    ],
)  # fmt: skip
def test_bad_files_are_one_line_exit_2(tmp_path, option, make, fragment):
    result = run_cli("check", str(SOURCE), option, str(make(tmp_path)))
    assert_one_line_error(result, 2, fragment)


def _text(directory: Path, text: str) -> Path:
    (directory / "bad.json").write_text(text)
    return directory / "bad.json"


def _arrays(directory: Path, count: int) -> Path:
    np.savez(directory / "arrays.npz", *(np.zeros(1, np.float32) for _ in range(count)))
    return directory / "arrays.npz"


def test_the_cli_takes_and_writes_json(tmp_path):
    result = run_cli(
        "check", str(SOURCE), "--inputs", str(INPUTS), "--load-outputs", str(OUTPUTS),
        "--save-outputs", str(tmp_path / "out.json"), "--compress_to_fp16=False",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("MATCH")
    assert json.loads((tmp_path / "out.json").read_text())["lst"][0][0] == "ov-loops-check"
