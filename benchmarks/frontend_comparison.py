"""Correctness of OpenVINO's own ONNX frontend vs ov-loops on every Loop, Scan and sequence
scenario.

Each scenario runs in a subprocess (OpenVINO's frontend output can crash the process), converted
both ways, compiled on CPU with f32 inference precision, and compared with onnxruntime over the
scenario's runs. Prints one row per scenario: OK, WRONG (first mismatch), REJECTED, CRASHED or
HUNG (no answer within SCENARIO_SECONDS).

    python benchmarks/frontend_comparison.py
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def verdict(name: str, how: str) -> str:
    import onnxruntime as ort
    import openvino as ov

    import ov_loops
    from tests.harness import F32, assert_close, run

    model, runs = all_scenarios()[name]()
    try:
        if how == "openvino":
            converted = ov.convert_model(io.BytesIO(model.SerializeToString()))
        else:
            converted = ov_loops.convert(model)
        compiled = ov.Core().compile_model(converted, "CPU", F32)
    except Exception as exc:
        return "REJECTED " + [ln for ln in str(exc).splitlines() if ln.strip()][-1][:90]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for index, entry in enumerate(runs):
        feeds, expected = entry if isinstance(entry, tuple) else (entry, None)
        if expected is None:
            expected = session.run(None, feeds)
        try:
            got = run(compiled, feeds)
        except Exception as exc:
            return (
                f"WRONG run {index} raised: " + [ln for ln in str(exc).splitlines() if ln][-1][:70]
            )
        for output, value in enumerate(expected):
            try:
                assert_close(value, got[output], "", 1e-5, 1e-6)
            except AssertionError as exc:
                return f"WRONG run {index} output {output}: {str(exc).strip().splitlines()[0][:70]}"
    return "OK"


def all_scenarios() -> dict:
    from tests import loop_scenarios, scan_scenarios, sequence_append_scenarios, sequence_scenarios

    return {
        **loop_scenarios.SCENARIOS,
        **scan_scenarios.SCENARIOS,
        **sequence_append_scenarios.APPENDED,
        **sequence_append_scenarios.NOT_APPENDED,
        **sequence_scenarios.SEQUENCE_SCENARIOS,
    }


SCENARIO_SECONDS = 120


def outcome(name: str, how: str) -> str:
    """The verdict of a child process converting and running scenario `name` one way."""
    try:
        child = subprocess.run(
            [sys.executable, __file__, name, how],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=SCENARIO_SECONDS,
        )
    except subprocess.TimeoutExpired:
        return f"HUNG (no answer in {SCENARIO_SECONDS} s)"
    lines = child.stdout.strip().splitlines()
    return lines[-1] if child.returncode == 0 and lines else f"CRASHED (exit {child.returncode})"


def main() -> int:
    scenarios = all_scenarios()
    counts = {"openvino": 0, "ov-loops": 0}
    print(f"{'scenario':48} {'openvino.convert_model':40} ov-loops")
    for name in sorted(scenarios):
        row = []
        for how in ("openvino", "ov-loops"):
            result = outcome(name, how)
            counts[how] += result == "OK"
            row.append(result)
        print(f"{name:48} {row[0][:40]:40} {row[1]}")
    total = len(scenarios)
    print(
        f"correct: openvino.convert_model {counts['openvino']}/{total}, "
        f"ov-loops {counts['ov-loops']}/{total}"
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3:
        print(verdict(sys.argv[1], sys.argv[2]))
        raise SystemExit(0)
    raise SystemExit(main())
