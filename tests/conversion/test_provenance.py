"""The IR says how it was made: rt_info/conversion_parameters as ovc writes them, and
rt_info/ov_loops with ov-loops' version and options (conversion/provenance.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import openvino as ov
import pytest

import ov_loops
from tests.harness import run_cli

SOURCE = Path(__file__).parents[2] / "ir_samples" / "rnn_loop.onnx"
ARGS = ("--input", "X[5,1,16]", "--compress_to_fp16=False")


def _rt_info(xml: Path, section: str) -> dict[str, str]:
    return _section(ov.Core().read_model(xml), section)


def _section(model: ov.Model, section: str) -> dict[str, str]:
    return {key: value.astype(str) for key, value in model.get_rt_info()[section].items()}


def test_the_cli_writes_ovcs_conversion_parameters_and_its_own(tmp_path):
    out = tmp_path / "ours"
    result = run_cli("convert", str(SOURCE), "-o", str(out), *ARGS, "--optimize", "max")
    assert result.returncode == 0, result.stderr
    xml = out.with_suffix(".xml")
    assert _rt_info(xml, "conversion_parameters") == {
        "input": "X[5,1,16]",
        "input_model": "DIR/rnn_loop.onnx",
        "is_python_object": "False",
        "output_model": str(out),
        "compress_to_fp16": "False",
    }
    assert _rt_info(xml, "ov_loops") == {
        "version": ov_loops.__version__,
        "optimize": "max",
        "target": "CPU",
        "stateful": "False",
    }
    info = ov.Core().read_model(xml).get_rt_info()
    assert info["Runtime_version"].astype(str) == ov.get_version()
    assert ov_loops.validate(xml).exit_code == 0
    assert run_cli("validate", str(xml)).returncode == 0


def test_the_conversion_parameters_are_those_ovc_writes(tmp_path):
    """Every key and value ovc's command line writes for the same options, ours too (ours adds
    input_model, as openvino.convert_model writes it)."""
    if shutil.which("ovc") is None:
        pytest.skip("ovc is not installed (it comes with the openvino package)")
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    subprocess.run(
        ["ovc", str(SOURCE), "--output_model", str(theirs), *ARGS],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert run_cli("convert", str(SOURCE), "-o", str(ours), *ARGS).returncode == 0
    expected = _rt_info(theirs.with_suffix(".xml"), "conversion_parameters")
    found = _rt_info(ours.with_suffix(".xml"), "conversion_parameters")
    expected["output_model"] = str(ours)
    assert expected.items() <= found.items()
    assert set(found) - set(expected) == {"input_model"}


def test_a_model_given_in_memory_is_a_python_object_without_a_path():
    model = ov_loops.convert(SOURCE.read_bytes(), unroll=4, output="hs")
    assert _section(model, "conversion_parameters") == {"is_python_object": "True", "output": "hs"}
    assert _section(model, "ov_loops")["unroll"] == "4"


def test_every_option_given_is_recorded():
    """translate's options reach the record as the one object they are checked in; a trip
    count bound for unbounded loops says how the IR was made as much as `unroll` does."""
    model = ov_loops.convert(SOURCE.read_bytes(), max_trip_count=7, target="gpu")
    assert {"max_trip_count": "7", "target": "gpu"}.items() <= _section(model, "ov_loops").items()
