"""Python run in a child process, for tests of code that may crash the process natively (the
CPU plugin's segfaults): a crash there fails the test instead of ending the session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_python(
    arguments: list[str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python *arguments` in `cwd`, this checkout first on PYTHONPATH, output captured."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, *arguments],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_python_surviving(
    arguments: list[str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`run_python`, failing the test when a signal killed the child."""
    result = run_python(arguments, cwd, timeout)
    if result.returncode < 0:
        name = signal.Signals(-result.returncode).name
        pytest.fail(f"killed by {name}: {result.stdout[-500:]}{result.stderr[-1500:]}")
    return result
