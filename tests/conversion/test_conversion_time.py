"""Conversion time: what keeps it linear in the number of loops (benchmarks/conversion_profile.py
splits it by stage; conversion_time.py and fresh_conversion.py compare it with convert_model)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.conversion_profile import STAGES
from ov_loops.conversion import allocator
from ov_loops.conversion.driver import Converter
from ov_loops.frontends.onnx.load.load import load_model
from tests.onnx_builders import side_by_side_loops

TREE = Path(__file__).resolve().parents[2]


class _Mallopt:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, parameter: int, value: int) -> int:
        self.calls.append((parameter, value))
        return 1


def test_a_conversion_runs_with_fast_bins_off_and_restores_them(monkeypatch):
    mallopt = _Mallopt()
    monkeypatch.setattr(allocator, "_mallopt", lambda: mallopt)
    conversion = Converter(load_model(side_by_side_loops(2))).convert()
    assert len(conversion.loops) == 4
    assert mallopt.calls == [(allocator.M_MXFAST, 0), (allocator.M_MXFAST, 128)]


def test_fast_bins_are_restored_when_the_conversion_fails(monkeypatch):
    mallopt = _Mallopt()
    monkeypatch.setattr(allocator, "_mallopt", lambda: mallopt)
    with pytest.raises(RuntimeError), allocator.without_fast_bins():
        raise RuntimeError("the conversion failed")
    assert mallopt.calls[-1] == (allocator.M_MXFAST, allocator.DEFAULT_MXFAST)


def test_fast_bins_the_user_tuned_are_left_alone(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mxfast=64")
    assert allocator._mallopt() is None


@pytest.mark.skipif(
    not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"), reason="glibc only"
)
def test_glibc_takes_the_setting(monkeypatch):
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    mallopt = allocator._mallopt()
    assert mallopt is not None
    with allocator.without_fast_bins():
        assert mallopt(allocator.M_MXFAST, 0) == 1  # accepted, as the context set it


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
