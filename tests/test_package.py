"""The distribution: the wheel holds the package alone, and the validator runs with lxml alone."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "ir_samples"

# Runs the CLI in a Python where importing numpy, onnx, openvino or onnxruntime fails.
WITHOUT_HEAVY_PACKAGES = """
import sys
for name in ("numpy", "onnx", "openvino", "onnxruntime", "ml_dtypes", "google.protobuf"):
    sys.modules[name] = None
from ov_loops.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_without_heavy_packages(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_HEAVY_PACKAGES, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_validate_runs_with_lxml_alone():
    valid = sorted((SAMPLES / "valid").glob("*.xml"))[0]
    result = run_without_heavy_packages("validate", str(valid))
    assert result.returncode == 0, result.stderr
    assert "0 error(s)" in result.stdout


def test_validate_finds_errors_with_lxml_alone():
    invalid = SAMPLES / "invalid" / "PM001.xml"
    result = run_without_heavy_packages("validate", str(invalid))
    assert result.returncode == 1, result.stderr
    assert "PM001" in result.stdout
    assert "Traceback" not in result.stderr


def test_a_command_needing_openvino_says_so_in_one_line_without_it():
    result = run_without_heavy_packages("convert", str(SAMPLES / "rnn_loop.onnx"), "-o", "x.xml")
    assert result.returncode == 2
    assert "'openvino'" in result.stderr or "'onnx'" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_wheel_holds_the_package_alone(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("ov_loops-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {
        "ov_loops",
        wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info",
    }
    assert "ov_loops/cli/main.py" in names
    assert "ov_loops/ir/rules.py" in names
    assert not any(name.endswith((".onnx", ".npz", ".xml", ".bin")) for name in names)
