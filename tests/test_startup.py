"""What a fresh process loads and reads before it does its work: `ov-loops --help` none of the
commands' modules, `ov-loops convert` of a one-loop model none of `check`'s and `validate`'s
and none of the lowerings and passes a default CPU conversion does not take; a conversion
reads no package metadata (the version is a literal)."""

from __future__ import annotations

import importlib.metadata
import json
import re

import pytest

from benchmarks.generated_models import sequential_loops
from ov_loops.version import VERSION
from tests.child_process import run_python
from tests.harness import write
from tests.loop_scenarios import loop_captures_main_graph_and_initializer

LOADED = """\
import json, sys
from ov_loops.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps([code, sorted(name for name in sys.modules if name.startswith("ov_loops"))]))
"""
COMMAND_MODULES = {"ov_loops.cli.check", "ov_loops.cli.convert", "ov_loops.cli.validate"}
# Imported by `ov-loops check` and `validate` alone.
NOT_CONVERTS = {"ov_loops.cli.check", "ov_loops.cli.validate", "ov_loops.checking"}
# The lowerings a loop at level "default" for CPU does not take (lower/select.py).
NOT_TAKEN = {
    f"ov_loops.lower.{name}"
    for name in (
        "cells",
        "cell_cost",
        "cell_match",
        "cell_patterns",
        "cell_reads",
        "fallback",
        "fold",
        "remainder",
        "stateful",
        "stateful_ops",
        "static",
        "streaming",
        "unroll",
        "zero_run_branch",
    )
}
# The passes it does not run: of level max, and of targets that unroll (pipeline.DEFERRED).
NOT_RUN = {
    f"ov_loops.loopir.passes.{name}"
    for name in (
        "linear_recurrences",
        "outer_products",
        "proven_trip_count",
        "row_products",
        "unroll_iterations",
    )
} | {"ov_loops.loopir.unrolling"}  # what unrolling builds on (it, lower/unroll.py, remainder.py)
# The general rewrite of sequences and optionals, for a model without any (load/prepare.py).
NOT_REWRITTEN = {
    f"ov_loops.frontends.onnx.rewrites.sequences.{name}"
    for name in ("sequences", "sequence_nodes", "sequence_concat", "sequence_emit", "sequence_ops")
}
# What a model that loads needs not: the message naming what a file is instead of ONNX.
NOT_FAILED = {"ov_loops.frontends.onnx.load.not_onnx"}

CELL_MODULES = {name for name in NOT_TAKEN if name.startswith("ov_loops.lower.cell")}


def _loaded(tmp_path, *arguments: str) -> tuple[int, set[str]]:
    """The exit code of `ov-loops ARGUMENTS` run in a fresh process, and ov_loops' modules
    loaded by then."""
    result = run_python(["-c", LOADED, *arguments], tmp_path)
    assert result.returncode == 0, result.stderr
    code, modules = json.loads(result.stdout.splitlines()[-1])
    return code, set(modules)


def test_help_loads_no_command_module(tmp_path):
    code, modules = _loaded(tmp_path, "--help")
    assert code == 0
    assert modules & COMMAND_MODULES == set()


@pytest.mark.parametrize(
    "command, expected",
    [
        ("convert", {"convert"}),
        ("validate", {"validate"}),
        ("check", {"check", "convert"}),  # convert's conversion options, one definition
    ],
)
def test_a_command_loads_its_own_modules(tmp_path, command, expected):
    code, modules = _loaded(tmp_path, command, "--help")
    assert code == 0
    assert modules & COMMAND_MODULES == {f"ov_loops.cli.{name}" for name in expected}


def test_convert_loads_neither_check_nor_the_lowerings_it_does_not_take(tmp_path):
    """Nor the passes it does not run, nor the rewrite of sequences of a model without any."""
    source = write(tmp_path, loop_captures_main_graph_and_initializer()[0])
    code, modules = _loaded(tmp_path, "convert", str(source), "-o", str(tmp_path / "o.xml"))
    assert code == 0 and (tmp_path / "o.xml").exists()
    assert "ov_loops.lower.loop5" in modules  # it did lower a loop
    assert modules & (NOT_CONVERTS | NOT_TAKEN | NOT_RUN | NOT_REWRITTEN | NOT_FAILED) == set()


def test_convert_at_max_loads_no_cell_module_for_a_body_that_cannot_be_a_cell(tmp_path):
    """A counter's body has no MatMul: lower/select.py's `may_be_cell` spares it recognition,
    and the process the cell modules (about 10 ms of CPU)."""
    source = write(tmp_path, sequential_loops(1))
    out = str(tmp_path / "o.xml")
    code, modules = _loaded(tmp_path, "convert", str(source), "-o", out, "--optimize", "max")
    assert code == 0 and (tmp_path / "o.xml").exists()
    assert "ov_loops.loopir.unrolling" in modules  # level max did run its passes
    assert modules & CELL_MODULES == set()


def test_the_installed_metadata_says_the_version_of_the_source():
    """pyproject.toml's build reads ov_loops/version.py's literal: the installed distribution
    (this checkout's, as `.ci/run` installs it) has the same version."""
    assert importlib.metadata.version("ov-loops") == VERSION
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)


READS_METADATA = """\
import json, sys
import ov_loops, openvino
before = "importlib.metadata" in sys.modules  # what openvino itself imports
import ov_loops.api
model = ov_loops.api.translate(sys.argv[1]).model
ov_loops.api.save(model, sys.argv[2])
print(json.dumps([before, "importlib.metadata" in sys.modules, ov_loops.__version__]))
"""


def test_a_conversion_reads_no_package_metadata(tmp_path):
    """Importing importlib.metadata and reading the METADATA header cost a fresh process's
    first conversion about 28 ms of CPU: the version it records in the IR is a literal."""
    source = write(tmp_path, loop_captures_main_graph_and_initializer()[0])
    out = tmp_path / "o.xml"
    result = run_python(["-c", READS_METADATA, str(source), str(out)], tmp_path)
    assert result.returncode == 0, result.stderr
    before, after, version = json.loads(result.stdout.splitlines()[-1])
    assert before or not after
    assert version == VERSION and f'"{VERSION}"' in out.read_text()
