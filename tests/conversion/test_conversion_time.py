"""Conversion time: what keeps it linear in the number of loops (benchmarks/conversion_profile.py
splits it by stage; conversion_time.py and fresh_conversion.py compare it with convert_model)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.conversion_profile import STAGES

TREE = Path(__file__).resolve().parents[2]


def test_the_profile_splits_a_conversion_by_stage(tmp_path):
    command = [
        sys.executable,
        "-m",
        "benchmarks.conversion_profile",
        "--models",
        "seq3,nest2",
        "--rounds",
        "1",
        "--directory",
        str(tmp_path),
    ]
    environment = {**os.environ, "PYTHONPATH": str(TREE)}
    done = subprocess.run(
        command, cwd=TREE, env=environment, capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    assert lines[1].split() == ["model", "total", *STAGES, "rest"]
    for line, model in zip(lines[2:], ("seq3", "nest2")):
        name, total, *stages = line.split()
        assert name == model
        assert float(total) > 0
        assert float(stages[2]) > 0  # the frontend ran
        assert float(stages[-1]) > -0.01  # exclusive: no time counted twice
