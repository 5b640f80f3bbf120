"""f64 models (issue 22 item 8): OpenVINO's CPU plugin computes f64 in f32, which `convert`
says in one warning line and `check` in a note; `save` keeps f64 constants at f64 where
compress_to_fp16 (ovc's too) rounded them to f16 (skl2onnx's GaussianProcessRegressor in f64:
its std moved by 1.17)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort

import ov_loops
from ov_loops import ovgraph
from ov_loops.checking.device import core
from ov_loops.checking.weights import f16_weights
from tests.harness import compile_f32, run_cli, write
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

# Weights f16 rounds by up to 2**-11 of them; f32 by 2**-24.
WEIGHTS = np.array([0.1, 1 / 3, 0.7071067811865476], np.float64)
FEEDS = {"x": np.array([1.0, -2.0, 0.5], np.float64)}


def f64_loop_model(elem_type: int = T.DOUBLE) -> onnx.ModelProto:
    """s = x; 4 times s = s * w + x (w a constant of the body), as f64 (or `elem_type`)."""
    dtype = {T.DOUBLE: np.float64, T.FLOAT: np.float32}[elem_type]
    body = loop_body(
        [
            node("Mul", ["s_in", "w"], ["sw"]),
            node("Add", ["sw", "x"], ["s_out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [typed("s_in", elem_type, [3])],
        [typed("go", T.BOOL, []), typed("s_out", elem_type, [3])],
        [const("w", WEIGHTS, dtype)],
    )
    main = graph(
        [node("Loop", ["n", "", "x"], ["y"], body=body)],
        [typed("x", elem_type, [3])],
        [typed("y", elem_type, [3])],
        [const("n", 4, np.int64)],
    )
    return model(main)


def onnxruntime_y(made: onnx.ModelProto, feeds: dict) -> np.ndarray:
    session = ort.InferenceSession(made.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def test_convert_warns_once_naming_the_f64_inputs_and_outputs(tmp_path):
    source = write(tmp_path, f64_loop_model())
    result = run_cli("convert", str(source), "-o", str(tmp_path / "o.xml"))
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith("ov-loops: WARNING: f64 inputs x and outputs y: ")
    assert "computes f64 in f32" in warnings[0]


def test_an_f32_model_gets_no_f64_warning(tmp_path):
    source = write(tmp_path, f64_loop_model(T.FLOAT))
    result = run_cli("convert", str(source), "-o", str(tmp_path / "o.xml"))
    assert result.returncode == 0 and "WARNING" not in result.stderr, result.stderr


def test_save_keeps_f64_constants_where_compress_to_fp16_rounded_them(tmp_path):
    """ov.save_model(compress_to_fp16=True), as ovc, stores w as f16: y moves by ~1e-4 of it;
    ov-loops' save keeps w at f64, and y is f32's rounding away from onnxruntime's f64."""
    made = f64_loop_model()
    xml = tmp_path / "o.xml"
    ov_loops.save(ov_loops.convert(made), xml)  # compress_to_fp16 by default
    saved = core().read_model(str(xml))
    assert f16_weights(saved) == 0
    kinds = {op.get_output_element_type(0).get_type_name() for op in _constants(saved)}
    assert "f64" in kinds and "f16" not in kinds
    want = onnxruntime_y(made, FEEDS)
    got = compile_f32(saved)(FEEDS)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)  # f32's rounding (w f16's: 3e-4)


def test_a_model_without_f64_constants_still_stores_f16_weights(tmp_path):
    xml = tmp_path / "o.xml"
    ov_loops.save(ov_loops.convert(f64_loop_model(T.FLOAT)), xml)
    assert f16_weights(core().read_model(str(xml))) == 1


def test_check_says_f64_outputs_are_computed_in_f32(tmp_path):
    source = write(tmp_path, f64_loop_model())
    np.savez(tmp_path / "in.npz", **FEEDS)
    result = run_cli("check", str(source), "--inputs", str(tmp_path / "in.npz"), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "MATCH"
    (output,) = report["outputs"]
    assert (output["dtype"], output["computed_in"]) == ("float64", "f32")
    assert "y: f64 computed in f32 (OpenVINO's CPU plugin computes f64 as f32)" in " ".join(
        report["notes"]
    )


def _constants(saved):
    return [
        op
        for op in ovgraph.all_ops(saved)
        if op.get_type_name() == "Constant" and op.get_output_element_type(0).is_real()
    ]
