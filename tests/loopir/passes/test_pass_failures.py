"""A pass that fails names itself and the loop: one line, exit code 1, nothing written."""

from __future__ import annotations

import pytest

from ov_loops.cli.main import main
from ov_loops.contract.spec import SpecError
from ov_loops.errors import ConversionError
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes import base
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.lower import select
from ov_loops.lower.loop5 import lower_to_loop5
from tests.harness import write
from tests.loop_scenarios import loop_captures_main_graph_and_initializer
from tests.loopir_scenarios import runtime_counter_two_carried

OPENVINO_LIKE = "Check 'index < size' failed at src/core/node.cpp:12:\nindex 3 out of range\nmore"


class Faulty(LoopPass):
    """A deliberately faulty optimisation: its run raises what a bug in it, or in OpenVINO
    under it, would."""

    name = "faulty"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        raise RuntimeError(OPENVINO_LIKE)


class BreaksTheLoop(LoopPass):
    """A deliberately faulty pass that returns a loop without its outer values."""

    name = "breaks-the-loop"

    def run(self, loop: LoopIR) -> LoopIR:
        return loop.replace(outer={})


def test_an_exception_escaping_a_pass_names_the_pass_and_the_loop():
    loop = runtime_counter_two_carried()[0]
    with pytest.raises(ConversionError) as raised:
        Faulty()(loop)
    assert str(raised.value) == "runtime_counter: pass faulty failed: index 3 out of range"
    assert raised.value.exit_code == 1
    assert isinstance(raised.value.__cause__, RuntimeError)


def test_a_loop_broken_by_a_pass_names_the_pass():
    loop = runtime_counter_two_carried()[0]
    with pytest.raises(SpecError, match=r"^after pass breaks-the-loop: runtime_counter: LoopIR:"):
        BreaksTheLoop()(loop)


def test_without_the_debug_checks_the_lowering_still_refuses_a_broken_loop(monkeypatch):
    """base.CHECKS off (a conversion's default; the tests turn it on): a pass's result is not
    checked, and the lowering checks the loop it gets once."""
    monkeypatch.setattr(base, "CHECKS", False)
    broken = BreaksTheLoop()(runtime_counter_two_carried()[0])  # not checked
    with pytest.raises(SpecError, match=r"^runtime_counter: LoopIR: outer values for ports"):
        lower_to_loop5(broken)


def test_convert_reports_a_failing_pass_in_one_line_and_writes_nothing(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(select, "AFTER_CELLS", (*select.AFTER_CELLS, Faulty))
    source = write(tmp_path, loop_captures_main_graph_and_initializer()[0])
    out = tmp_path / "out.xml"
    assert main(["convert", str(source), "-o", str(out)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["ov-loops: error: main/Loop_0: pass faulty failed: index 3 out of range"]
    assert not out.exists() and not out.with_suffix(".bin").exists()
