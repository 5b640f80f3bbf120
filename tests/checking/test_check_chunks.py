"""`ov-loops check` of stateful models: the IR reference runs ReadValue/Assign (one pass), and
`--chunks` feeds an input in chunks on one infer request, compared with one reference pass over
the whole sequence (checking/chunks.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import onnx
import pytest
from lxml import etree

import ov_loops
import ov_loops.checking.outcome as outcome_of
from ov_loops.checking import check
from ov_loops.checking.chunks import Chunking, ChunkSpec, combine, parse_chunks, resolve
from ov_loops.checking.device import DeviceRun
from ov_loops.checking.settings import Settings
from ov_loops.checking.tolerance import parse_tolerances
from ov_loops.errors import InputError
from ov_loops.reference.ir import kernels
from ov_loops.reference.ir.state import STATE_KERNELS
from tests.checking.test_check import run_main
from tests.harness import assert_one_line_error, run_cli
from tests.lower.test_stateful import HIDDEN, _rnn_loop
from tests.onnx_builders import T, const, graph, model, node, typed
from tests.scan_scenarios import SCENARIOS as SCAN_SCENARIOS

RNG = np.random.default_rng(13)
SEQUENCE = RNG.normal(size=(9, 2, HIDDEN)).astype(np.float32)
H0 = RNG.normal(size=(2, HIDDEN)).astype(np.float32)
FEEDS = {"X": SEQUENCE, "h0": H0}


@pytest.fixture(scope="module")
def rnn(tmp_path_factory) -> SimpleNamespace:
    """The RNN of test_stateful as .onnx, as the IR `convert --stateful` writes, as a plain IR,
    and its inputs as .npz."""
    directory = tmp_path_factory.mktemp("rnn")
    paths = SimpleNamespace(
        onnx=directory / "rnn.onnx",
        stateful=directory / "stateful.xml",
        plain=directory / "plain.xml",
        inputs=directory / "inputs.npz",
    )
    onnx.save(_rnn_loop(), paths.onnx)
    np.savez(paths.inputs, **FEEDS)
    converted = run_cli("convert", str(paths.onnx), "-o", str(paths.stateful), "--stateful")
    assert converted.returncode == 0, converted.stderr
    ov_loops.save(ov_loops.convert(_rnn_loop()), paths.plain, compress_to_fp16=False)
    return paths


# -- the IR reference of ReadValue-6 / Assign-6 ---------------------------------------------------
def test_a_stateful_ir_checks_as_one_pass(rnn):
    report = check(rnn.stateful, inputs=FEEDS)
    assert report.ok and report.chunks is None
    assert [row.name for row in report.rows] == ["h_last", "hs"]
    assert report.rows[1].shape == (9, 2, HIDDEN)


def _layer(**data) -> SimpleNamespace:
    return SimpleNamespace(name="rv", type="ReadValue", data={"variable_id": "v", **data})


def test_read_value_gives_its_init_or_zeros_of_a_static_variable():
    init = np.arange(6, dtype=np.float32).reshape(2, 3)
    (value,) = STATE_KERNELS["ReadValue"](_layer(variable_shape="2,3"), [init])
    np.testing.assert_array_equal(value, init)
    layer = _layer(variable_shape="2,3", variable_type="i32")
    (zeros,) = STATE_KERNELS["ReadValue"](layer, [])
    assert zeros.shape == (2, 3) and zeros.dtype == np.int32 and not zeros.any()
    (stored,) = STATE_KERNELS["Assign"](SimpleNamespace(name="a", data={}), [init])
    assert stored is init


def test_read_value_without_init_of_a_dynamic_variable_is_one_line():
    with pytest.raises(InputError, match="ReadValue 'rv' of variable 'v' has no initial") as err:
        STATE_KERNELS["ReadValue"](_layer(variable_shape="?,3", variable_type="f32"), [])
    assert "\n" not in str(err.value)


# -- --chunks on the device ---------------------------------------------------------------------
@pytest.mark.parametrize("source", ["onnx", "stateful"])
@pytest.mark.parametrize(
    ("chunks", "lengths"), [("X=3", [3, 3, 3]), ("X=3,0,2,4", [3, 0, 2, 4]), ("X=1", [9])]
)
def test_chunks_of_the_rnn_match_one_pass(rnn, source, chunks, lengths):
    report = check(getattr(rnn, source), inputs=FEEDS, chunks=chunks)
    assert report.ok, report.lines()
    assert report.chunks["lengths"] == lengths and report.chunks["input"] == "X"
    assert report.chunks["outputs"] == {
        "h_last": "last chunk",
        "hs": "last chunk" if len(lengths) == 1 else "concatenated along axis 0",
    }
    (after_reset,) = [o for o in report.opinions if o.name == "after reset_state"]
    assert after_reset.decides and after_reset.ok
    assert report.outputs[1].shape == (9, 2, HIDDEN)


def test_chunks_in_the_cli_report_text_and_json(rnn, capsys):
    args = ("check", str(rnn.stateful), "--inputs", str(rnn.inputs), "--chunks", "X:0=4,5")
    text = run_main(capsys, *args)
    assert text.returncode == 0, text.stderr
    assert "split along axis 0 into lengths [4, 5]" in text.stdout
    assert "after reset_state vs the reference: agrees on all 2 output(s)" in text.stdout
    document = json.loads(run_main(capsys, *args, "--format", "json").stdout)
    assert document["chunks"]["lengths"] == [4, 5] and document["chunks"]["axis"] == 0
    assert document["opinions"][0] == {
        "name": "after reset_state",
        "against": "reference",
        "status": "compared",
        "reason": None,
        "ok": True,
        "decides": True,
    }


@pytest.mark.parametrize(
    ("name", "chunks", "concatenated"),
    [
        ("scan_forward_running_sum", "x=2,0,3,2", "concatenated along axis 0"),
        ("scan_negative_axes", "x:-1=3", "concatenated along axis 1"),
    ],
)
def test_a_scan_checks_in_chunks(tmp_path, name, chunks, concatenated):
    made, _ = SCAN_SCENARIOS[name]()
    onnx.save(made, tmp_path / "scan.onnx")
    shapes = {"x": (7, 3)} if name == "scan_forward_running_sum" else {"x": (2, 6)}
    report = check(tmp_path / "scan.onnx", shapes=shapes, chunks=chunks)
    assert report.ok, report.lines()
    assert report.chunks["outputs"] == {"s": "last chunk", "ys": concatenated}


def _assign_stores_its_read(xml: Path, out: Path) -> Path:
    """The IR with its Assign fed by the ReadValue: the state never moves, each call restarts
    from the initial value (a wrong stateful IR)."""
    tree = etree.parse(str(xml))
    layers = {layer.get("type"): layer for layer in tree.iter("layer")}
    read, assign = layers["ReadValue"], layers["Assign"]
    (edge,) = [e for e in tree.iter("edge") if e.get("to-layer") == assign.get("id")]
    edge.set("from-layer", read.get("id"))
    edge.set("from-port", read.find("output/port").get("id"))
    tree.write(str(out))
    out.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes())
    return out


def test_a_state_that_does_not_carry_is_a_mismatch(rnn, tmp_path, capsys):
    wrong = _assign_stores_its_read(rnn.stateful, tmp_path / "wrong.xml")
    assert check(wrong, inputs=FEEDS).ok  # one pass cannot tell
    result = run_main(capsys, "check", str(wrong), "--inputs", str(rnn.inputs), "--chunks", "X=3")
    assert result.returncode == 1 and result.stdout.splitlines()[-1] == "MISMATCH"
    assert "divergence locator runs on whole-sequence runs only" in result.stdout
    assert "after reset_state vs the reference: agrees" in result.stdout  # one pass again
    whole = run_main(capsys, "check", str(wrong), "--inputs", str(rnn.inputs), "--chunks", "X=1")
    assert whole.returncode == 0, whole.stdout


# -- combining the chunks' outputs, without a device ----------------------------------------------
def test_combine_keeps_a_last_value_and_concatenates_a_scan_output():
    expected = [np.zeros((2, 4)), np.zeros((9, 2, 4))]
    chunked = [
        [np.full((2, 4), k), np.full((length, 2, 4), k)] for k, length in enumerate([3, 0, 6])
    ]
    chunked[1][1] = np.zeros((0, 0, 0))  # an empty chunk's other dims may be 0
    values, joined_along = combine(expected, chunked, axis=0)
    assert joined_along == [None, 0]
    np.testing.assert_array_equal(values[0], np.full((2, 4), 2))
    np.testing.assert_array_equal(values[1][:, 0, 0], [0, 0, 0, 2, 2, 2, 2, 2, 2])


def test_combine_finds_a_scan_axis_other_than_the_chunked_one():
    expected = [np.zeros((2, 6)), np.zeros((3,))]
    chunked = [[np.full((2, length), k), np.full(3, k)] for k, length in enumerate([2, 4])]
    values, joined_along = combine(expected, chunked, axis=0)
    assert joined_along == [1, None]
    np.testing.assert_array_equal(values[0][0], [0, 0, 1, 1, 1, 1])
    wrong_shape = [[np.zeros((5,))], [np.zeros((5,))]]
    values, joined_along = combine([np.zeros((7,))], wrong_shape, axis=0)
    assert joined_along == [None] and values[0].shape == (5,)  # compared: a shape mismatch


def test_near_equal_chunks_and_names_holding_a_colon():
    feeds = {"x:0": np.zeros((7, 2)), "y": np.zeros((2, 5))}
    assert resolve(parse_chunks("x:0=3"), feeds) == Chunking("x:0", 0, (3, 2, 2))
    assert resolve(parse_chunks("y:1=2"), feeds) == Chunking("y", 1, (3, 2))
    assert resolve(parse_chunks("y:-1=9"), feeds).lengths == (1,) * 5 + (0,) * 4
    assert parse_chunks("y=0,5") == ChunkSpec("y=0,5", "y", lengths=(0, 5))
    parts = resolve(parse_chunks("y:1=0,2,3"), feeds).split(feeds)
    assert [part["y"].shape for part in parts] == [(2, 0), (2, 2), (2, 3)]
    assert all(part["x:0"] is feeds["x:0"] for part in parts)


# -- bad input: one line, exit 2 ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("chunks", "fragment"),
    [
        ("Y=3", "the model has no input 'Y' (inputs: X, h0)"),
        ("X:3=3", "axis 3 is out of range for input 'X' of shape [9, 2, 4]"),
        ("X=3,2", "the lengths sum to 5, input 'X' has 9 along axis 0"),
        ("X=0", "the number of chunks must be at least 1"),
        ("X=2.5", "N and the lengths must be integers"),
        ("X=3,-1,7", "chunk lengths must not be negative"),
        ("X", "expected NAME[:AXIS]=N"),
    ],
)
def test_bad_chunks_are_one_line(rnn, capsys, chunks, fragment):
    args = ("check", str(rnn.stateful), "--inputs", str(rnn.inputs), "--chunks", chunks)
    assert_one_line_error(run_main(capsys, *args), 2, f"--chunks {chunks}: {fragment}")


def test_chunks_of_a_plain_ir_or_against_convert_model_are_refused(rnn, capsys):
    plain = ("check", str(rnn.plain), "--inputs", str(rnn.inputs), "--chunks", "X=3")
    assert_one_line_error(
        run_main(capsys, *plain), 2, "--chunks needs a stateful IR (convert with --stateful)"
    )
    against = ("check", str(rnn.onnx), "--chunks", "X=3", "--against", "convert-model")
    assert_one_line_error(run_main(capsys, *against), 2, "cannot be combined with --against")


def test_help_documents_chunks():
    text = run_cli("check", "--help").stdout
    assert "--chunks NAME[:AXIS]=N|L1,L2,..." in text and "reset_state()" in text


def test_a_mismatch_after_reset_state_decides_the_verdict():
    settings = Settings("CPU", {}, 0, 1e-4, 1e-5, "f32", 100)
    request = outcome_of.Request(settings, parse_tolerances(None, None), {}, None, None, ())
    want = [np.ones(3, np.float32)]
    outcome = outcome_of.Outcome(Path("m.xml"), "IR reference", ["y"], want)
    outcome.device = DeviceRun(want, "f32")
    outcome.others[outcome_of.AFTER_RESET] = [np.zeros(3, np.float32)]
    outcome.deciding.add(outcome_of.AFTER_RESET)
    report = outcome_of.report_of(outcome, request)
    assert report.rows[0].ok and not report.ok and report.exit_code == 1
    outcome.deciding.clear()
    assert outcome_of.report_of(outcome, request).ok  # an opinion alone does not decide


def test_the_divergence_locator_runs_on_a_stateful_ir(rnn, monkeypatch):
    """Its Assign (a sink) is no value the instrumented model emits."""
    tanh = kernels.KERNELS["Tanh"]
    monkeypatch.setitem(kernels.KERNELS, "Tanh", lambda layer, x: [tanh(layer, x)[0] + 1])
    report = check(rnn.stateful, inputs=FEEDS)
    assert not report.ok and report.divergence is not None
    text = report.divergence.text()
    assert text.startswith("first divergence: main/Loop") and "[0]" in text, text


def test_chunks_of_a_model_without_state_say_so(tmp_path):
    """Nothing to carry: each chunk runs on its own, which an elementwise model allows."""
    main = graph(
        [node("Add", ["x", "one"], ["y"])],
        [typed("x", T.FLOAT, ["N", 2])],
        [typed("y", T.FLOAT, ["N", 2])],
        [const("one", 1.0)],
    )
    onnx.save(model(main), tmp_path / "add.onnx")
    report = check(tmp_path / "add.onnx", shapes={"x": (5, 2)}, chunks="x=2")
    assert report.ok and report.chunks["lengths"] == [3, 2]
    assert any("keeps no state" in note for note in report.notes)
