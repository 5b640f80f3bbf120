"""The validator judges a repeated loop layer once (ov_loops/ir/repeats.py), and still reports
every finding of every loop with that loop's own id, name, path and lines: one broken loop of
many identical ones, a broken first one, all of them broken alike, and a repeat whose inputs
in the main graph differ (a rule reading the main graph finds something in it alone)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest
from lxml import etree

import ov_loops
from ov_loops.errors import InputError
from ov_loops.ir import repeats, rules
from ov_loops.ir import validate as validating
from tests.fuzz.ir_mutations import TREE_MUTATIONS, IrMutant, NotApplicable

LOOPS = 8


def _counting_loops(tmp_path: Path, conditions: list[bool] | None = None) -> Path:
    """LOOPS identical Loops in a chain, each adding one to the carried value 3 times (the
    initial execution condition of loop k is `conditions[k]`, True by default)."""
    conditions = conditions or [True] * LOOPS
    first = ops.parameter([2], np.float32, name="x")
    value = first.output(0)
    for index, condition in enumerate(conditions):
        acc_in = ops.parameter([2], np.float32, name=f"acc_in{index}")
        acc = ops.result(ops.add(acc_in, ops.constant(np.ones(2, np.float32))))
        body = ov.Model([acc, ops.result(ops.constant(True))], [acc_in], f"body{index}")
        loop = ops.loop(ops.constant(np.int64(3)), ops.constant(condition))
        loop.set_friendly_name(f"loop{index}")
        loop.set_function(body)
        loop.set_special_body_ports([-1, 1])
        loop.set_merged_input(acc_in, value, acc.output(0))
        value = loop.get_iter_value(acc.output(0), -1)
    xml = tmp_path / "loops.xml"
    ov.save_model(ov.Model([value], [first], "loops"), str(xml), compress_to_fp16=False)
    return xml


def _each_judged_whole(monkeypatch, xml: Path) -> ov_loops.Report:
    """The report with every layer judged whole: no two layers share a key."""
    with monkeypatch.context() as patched:
        patched.setattr(repeats, "layer_key", lambda element: etree.tostring(element))
        return ov_loops.validate(xml, "GPU")


def _loop_layers(root) -> list:
    return [layer for layer in root.find("layers") if layer.get("type") == "Loop"]


def _break(xml: Path, indexes: list[int]) -> None:
    """Make the body Parameter of the loops at `indexes` (document order) an i32 one: the
    merged input and back edge disagree with it (BE004 and PM008-like errors)."""
    tree = etree.parse(str(xml))
    for index in indexes:
        body = _loop_layers(tree.getroot())[index].find("body")
        parameter = next(layer for layer in body.iter("layer") if layer.get("type") == "Parameter")
        parameter.find("data").set("element_type", "i32")
    tree.write(str(xml))


@pytest.mark.parametrize("broken", [[0], [3], [LOOPS - 1], [0, 5], list(range(LOOPS))])
def test_a_broken_loop_among_identical_ones_is_reported_with_its_own_layer(
    tmp_path, monkeypatch, broken
):
    xml = _counting_loops(tmp_path)
    assert ov_loops.validate(xml).findings == []
    _break(xml, broken)
    report = ov_loops.validate(xml, "GPU")
    assert report.loops == LOOPS and report.errors
    assert {finding.layer_name for finding in report.findings} == {f"loop{i}" for i in broken}
    lines = {layer.get("name"): layer.sourceline for layer in _loop_layers(etree.parse(str(xml)))}
    for finding in report.findings:  # a line inside its own loop layer
        assert lines[finding.layer_name] <= finding.line
        assert all(
            finding.line < line for line in lines.values() if line > lines[finding.layer_name]
        )
    assert report == _each_judged_whole(monkeypatch, xml)


def test_a_repeat_fed_differently_in_the_main_graph_is_reported_alone(tmp_path, monkeypatch):
    """The bodies are identical, loop 5's initial condition is a constant false (WR002, a rule
    reading the main graph): found for loop 5 only, at its own line."""
    xml = _counting_loops(tmp_path, [index != 5 for index in range(LOOPS)])
    report = ov_loops.validate(xml)
    assert [(finding.code, finding.layer_name) for finding in report.findings] == [
        ("WR002", "loop5")
    ]
    loop5 = next(
        layer for layer in _loop_layers(etree.parse(str(xml))) if layer.get("name") == "loop5"
    )
    assert report.findings[0].line == loop5.sourceline
    assert report == _each_judged_whole(monkeypatch, xml)


def test_identical_loops_are_judged_once_but_for_the_rules_reading_the_main_graph(
    tmp_path, monkeypatch
):
    """A rule reading only the layer (ST002) runs once for LOOPS identical loops; one reading
    the main graph (SP003: the trip count and condition feeding the layer) runs for each."""
    xml = _counting_loops(tmp_path)
    runs = {"ST002": 0, "SP003": 0}

    def counted(rule: rules.Rule) -> rules.Rule:
        def check(loop):
            runs[rule.code] += 1
            return rule.check(loop)

        return rules.Rule(rule.code, rule.severity, rule.summary, check, rule.target)

    counting = [counted(rule) if rule.code in runs else rule for rule in rules.RULES]
    monkeypatch.setattr(validating, "RULES", counting)
    assert ov_loops.validate(xml).loops == LOOPS
    assert runs == {"ST002": 1, "SP003": LOOPS}


@pytest.mark.parametrize("seed", range(40))
def test_mutants_of_many_identical_loops_find_what_judging_each_whole_finds(
    tmp_path, monkeypatch, seed
):
    """One or two of tests/fuzz's IR mutations on an IR of identical loops (most break one of
    them): the same report, findings in the same order, as judging every layer whole."""
    rng = random.Random(seed)
    xml = _counting_loops(tmp_path)
    parser = etree.XMLParser(remove_blank_text=False, resolve_entities=False)
    mutant = IrMutant(etree.ElementTree(etree.parse(str(xml), parser).getroot()), b"")
    for _ in range(rng.choice([1, 2])):
        for _attempt in range(8):
            try:
                TREE_MUTATIONS[rng.choice(sorted(TREE_MUTATIONS))](mutant, rng)
            except NotApplicable:
                continue
            break
    xml.write_bytes(mutant.xml())
    assert _outcome(lambda: ov_loops.validate(xml, "GPU")) == _outcome(
        lambda: _each_judged_whole(monkeypatch, xml)
    )


def _outcome(validating):
    """The report, or the one line of the InputError refusing the IR."""
    try:
        return validating()
    except InputError as refused:
        return str(refused)
