"""--stateful: the main graph's loops keep their carried values in OpenVINO Variables, so a
sequence fed in chunks gives the results of one pass over the whole (lower/stateful.py)."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.errors import ConversionError, InputError
from ov_loops.serving import repository as serving_repository
from ov_loops.serving import save_ovms
from tests.harness import assert_one_line_error, compile_f32, run_cli
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed
from tests.scan_scenarios import SCENARIOS as SCAN_SCENARIOS

HIDDEN = 4
RNG = np.random.default_rng(5)
W = (RNG.normal(size=(HIDDEN, HIDDEN)) / 2).astype(np.float32)
R = (RNG.normal(size=(HIDDEN, HIDDEN)) / 2).astype(np.float32)


def _rnn_loop() -> onnx.ModelProto:
    """h = tanh(x_t W + h R) over the rows of X (trip count Shape(X)[0]); outputs the last h
    and every h (a scan output)."""
    body = loop_body(
        [node("Gather", ["X", "i"], ["x_t"], axis=0), node("MatMul", ["x_t", "W"], ["xw"]),
         node("MatMul", ["h_in", "R"], ["hr"]), node("Add", ["xw", "hr"], ["pre"]),
         node("Tanh", ["pre"], ["h_out"]), node("Identity", ["h_out"], ["h_row"]),
         node("Identity", ["cond_in"], ["cond_out"])],
        [typed("h_in", T.FLOAT, ["B", HIDDEN])],
        [typed("cond_out", T.BOOL, []), typed("h_out", T.FLOAT, ["B", HIDDEN]),
         typed("h_row", T.FLOAT, ["B", HIDDEN])],
    )  # fmt: skip
    main = graph(
        [node("Shape", ["X"], ["shape"]), node("Gather", ["shape", "zero"], ["steps"], axis=0),
         node("Loop", ["steps", "", "h0"], ["h_last", "hs"], body=body)],
        [typed("X", T.FLOAT, ["T", "B", HIDDEN]), typed("h0", T.FLOAT, ["B", HIDDEN])],
        [typed("h_last", T.FLOAT, ["B", HIDDEN]), typed("hs", T.FLOAT, ["T", "B", HIDDEN])],
        [const("W", W), const("R", R), const("zero", 0, np.int64)],
    )  # fmt: skip
    return model(main)


def _chunked(compiled, sequence: np.ndarray, h0: np.ndarray, lengths: list[int]) -> list:
    """(last h, all h) after feeding `sequence` in chunks of `lengths` to one request."""
    request = compiled.create_infer_request()
    start, rows, outputs = 0, [], None
    for length in lengths:
        outputs = request.infer({"X": sequence[start : start + length], "h0": h0})
        part = outputs[compiled.output("hs")]
        assert part.shape[0] == length
        if length:  # an empty chunk's scan output: 0 rows (its other dims may be 0 too)
            rows.append(part)
        start += length
    return [outputs[compiled.output("h_last")], np.concatenate(rows)]


@pytest.mark.parametrize("optimize", ["none", "default", "max"])
def test_chunks_give_the_whole_sequences_results_and_reset_starts_again(optimize):
    compiled = compile_f32(ov_loops.convert(_rnn_loop(), optimize=optimize, stateful=True))
    plain = compile_f32(ov_loops.convert(_rnn_loop(), optimize=optimize))
    sequence = RNG.normal(size=(9, 2, HIDDEN)).astype(np.float32)
    h0 = RNG.normal(size=(2, HIDDEN)).astype(np.float32)
    whole = plain({"X": sequence, "h0": h0})
    expected = [whole[plain.output("h_last")], whole[plain.output("hs")]]
    for lengths in ([9], [3, 0, 2, 4], [1] * 9):
        got = _chunked(compiled, sequence, h0, lengths)
        for want, have in zip(expected, got):
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6, err_msg=str(lengths))


def test_reset_state_starts_from_the_fed_initial_value_again():
    compiled = compile_f32(ov_loops.convert(_rnn_loop(), stateful=True))
    request = compiled.create_infer_request()
    sequence = RNG.normal(size=(4, 1, HIDDEN)).astype(np.float32)
    h0 = np.zeros((1, HIDDEN), np.float32)
    first = request.infer({"X": sequence, "h0": h0})[compiled.output("h_last")].copy()
    second = request.infer({"X": sequence, "h0": h0})[compiled.output("h_last")].copy()
    assert not np.allclose(first, second)  # the second call went on from the first one's h
    request.reset_state()
    again = request.infer({"X": sequence, "h0": h0})[compiled.output("h_last")]
    np.testing.assert_allclose(again, first, rtol=1e-6, atol=1e-7)


def test_the_ir_keeps_one_variable_per_carried_value(tmp_path):
    conversion = ov_loops.translate(_rnn_loop(), stateful=True)
    ov_loops.save(conversion.model, tmp_path / "s.xml", compress_to_fp16=False)
    xml = (tmp_path / "s.xml").read_text()
    assert xml.count('type="ReadValue"') == 1 and xml.count('type="Assign"') == 1
    (loop,) = conversion.loops
    assert len(loop.states) == 1
    without = ov_loops.translate(_rnn_loop())
    assert without.loops[0].states == ()


def test_a_scan_streams_its_state_too():
    made, _ = SCAN_SCENARIOS["scan_forward_running_sum"]()
    compiled = compile_f32(ov_loops.convert(made, stateful=True))
    s0 = RNG.normal(size=3).astype(np.float32)
    x = RNG.normal(size=(7, 3)).astype(np.float32)
    request = compiled.create_infer_request()
    for part in (x[:3], x[3:3], x[3:]):
        got = request.infer({"s0": s0, "x": part})
    np.testing.assert_allclose(got[compiled.output("s")], s0 + x.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        got[compiled.output("ys")], s0 + np.cumsum(x, 0)[3:], rtol=1e-5, atol=1e-6
    )


def test_scan8_is_refused_in_one_line():
    made, _ = SCAN_SCENARIOS["scan8_without_sequence_lens"]()
    with pytest.raises(ConversionError, match="Scan-8 keeps no state") as refused:
        ov_loops.convert(made, stateful=True)
    assert "\n" not in str(refused.value)


def test_cli_writes_a_stateful_ir_that_validates_clean(tmp_path):
    source = tmp_path / "rnn.onnx"
    onnx.save(_rnn_loop(), source)
    out = tmp_path / "rnn.xml"
    result = run_cli("convert", str(source), "-o", str(out), "--stateful")
    assert result.returncode == 0, result.stderr
    assert 'type="Assign"' in out.read_text()
    assert ov_loops.validate(out).exit_code == 0


def test_ovms_layout_writes_a_model_repository_and_keeps_other_entries(tmp_path):
    source = tmp_path / "rnn.onnx"
    onnx.save(_rnn_loop(), source)
    repository = tmp_path / "models"
    repository.mkdir()
    (repository / "config.json").write_text(
        json.dumps({"model_config_list": [{"config": {"name": "other", "base_path": "other"}}]})
    )
    for _ in range(2):  # converting again replaces the entry
        result = run_cli("convert", str(source), "-o", str(repository), "--layout", "ovms")
        assert result.returncode == 0, result.stderr
    assert (repository / "rnn" / "1" / "model.xml").exists()
    assert (repository / "rnn" / "1" / "model.bin").exists()
    config = json.loads((repository / "config.json").read_text())
    names = [entry["config"]["name"] for entry in config["model_config_list"]]
    assert names == ["other", "rnn"]
    assert config["model_config_list"][1]["config"] == {"name": "rnn", "base_path": "rnn"}


def test_ovms_layout_marks_a_model_with_variables_stateful(tmp_path):
    """OVMS serves a model that keeps state between requests only with "stateful": true."""
    repository = tmp_path / "models"
    save_ovms(ov_loops.convert(_rnn_loop(), stateful=True), repository, "rnn", False)
    (entry,) = json.loads((repository / "config.json").read_text())["model_config_list"]
    assert entry["config"] == {"name": "rnn", "base_path": "rnn", "stateful": True}
    assert 'type="Assign"' in (repository / "rnn" / "1" / "model.xml").read_text()


def _repository_files(repository) -> dict[str, bytes]:
    return {str(p.relative_to(repository)): p.read_bytes() for p in repository.rglob("*")
            if p.is_file()}  # fmt: skip


@pytest.mark.parametrize("before", ["empty", "an older version"])
def test_ovms_layout_leaves_the_repository_as_it_was_when_config_json_cannot_be_written(
    tmp_path, monkeypatch, before
):
    repository = tmp_path / "models"
    repository.mkdir()
    (repository / "config.json").write_text('{"model_config_list": []}')
    if before == "an older version":
        save_ovms(ov_loops.convert(_rnn_loop()), repository, "rnn", False)
    files = _repository_files(repository)

    def disk_full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(serving_repository, "write_atomically", disk_full)
    with pytest.raises(InputError, match="config.json: cannot write: No space left") as failed:
        save_ovms(ov_loops.convert(_rnn_loop(), stateful=True), repository, "rnn", False)
    assert "\n" not in str(failed.value)
    assert _repository_files(repository) == files  # no model, no scratch files, same config
    assert sorted(p.name for p in repository.iterdir()) == sorted(
        ["config.json", *(["rnn"] if before == "an older version" else [])]
    )


def test_ovms_layout_refuses_a_config_json_that_is_a_directory_and_writes_nothing(tmp_path):
    source = tmp_path / "rnn.onnx"
    onnx.save(_rnn_loop(), source)
    repository = tmp_path / "models"
    (repository / "config.json").mkdir(parents=True)
    result = run_cli("convert", str(source), "-o", str(repository), "--layout", "ovms")
    assert_one_line_error(result, 2, "config.json")
    assert [p.name for p in repository.iterdir()] == ["config.json"]


def test_ovms_layout_refuses_a_config_of_another_form_in_one_line(tmp_path):
    source = tmp_path / "rnn.onnx"
    onnx.save(_rnn_loop(), source)
    (tmp_path / "config.json").write_text("[1, 2]")
    result = run_cli("convert", str(source), "-o", str(tmp_path), "--layout", "ovms")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "config.json" in result.stderr and not (tmp_path / "rnn").exists()


def test_the_ir_runs_under_benchmark_app(tmp_path):
    """benchmark_app (OpenVINO's tool) loads and runs the stateful IR with a short sequence."""
    if shutil.which("benchmark_app") is None:
        pytest.skip("benchmark_app is not installed (it comes with the openvino package)")
    source, out = tmp_path / "rnn.onnx", tmp_path / "rnn.xml"
    onnx.save(_rnn_loop(), source)
    assert run_cli("convert", str(source), "-o", str(out)).returncode == 0
    result = subprocess.run(
        ["benchmark_app", "-m", str(out), "-d", "CPU", "-t", "1", "-hint", "latency",
         "-data_shape", "X[6,2,4],h0[2,4]", "-infer_precision", "f32"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Throughput:" in result.stdout


def test_a_torchscript_loop_whose_node_name_has_a_slash_keeps_its_state():
    """TorchScript names nodes `/Loop` (the path `main//Loop`): the loop was taken for a nested
    one and `--stateful` made no Variable at all, silently (exit 0)."""
    corpus = Path(__file__).resolve().parents[1] / "models" / "exporters"
    conversion = ov_loops.translate(corpus / "torch_ts_elman_stack.onnx", stateful=True)
    kinds = [op.get_type_name() for op in conversion.model.get_ordered_ops()]
    assert kinds.count("ReadValue") == 1 and kinds.count("Assign") == 1
