"""simplify-body remembers the bodies MOC left unchanged (by `ovgraph.structure_digest`, all but
names), so many loops of one form run MOC once; a body MOC changes runs it every time."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

import ov_loops
from benchmarks.generated_models import nested_loops, sequential_loops
from ov_loops.loopir.passes import simplify
from ov_loops.ovgraph import structure_digest


def _body(name: str, addend: float = 1.0, shape=(4,)) -> ov.Model:
    x = ops.parameter(list(shape), np.float32, name=f"{name}_x")
    added = ops.add(x, ops.constant(np.full(shape, addend, np.float32)))
    added.set_friendly_name(f"{name}_add")
    return ov.Model([ops.result(ops.relu(added))], [x], name)


def test_digests_are_equal_for_bodies_differing_in_names_only():
    assert structure_digest(_body("a")) == structure_digest(_body("b"))
    assert structure_digest(_body("a")) != structure_digest(_body("a", addend=2.0))
    assert structure_digest(_body("a")) != structure_digest(_body("a", shape=(5,)))


def test_a_body_holding_a_loop_has_no_digest():
    converted = ov_loops.convert(nested_loops(2), optimize="none")
    loop = next(op for op in converted.get_ordered_ops() if op.get_type_name() == "Loop")
    assert structure_digest(loop.get_function()) is None


def _counting_moc(monkeypatch) -> list[int]:
    calls = []
    moc = simplify.apply_moc_transformations

    def counted(model, cf):
        calls.append(1)
        return moc(model, cf=cf)

    monkeypatch.setattr(simplify, "_UNCHANGED", {})
    monkeypatch.setattr(simplify, "apply_moc_transformations", counted)
    return calls


def _never(body: ov.Model, deferred: bool = False) -> bool:
    return False


def test_loops_of_one_form_run_moc_once_and_convert_as_without_the_memo(monkeypatch):
    calls = _counting_moc(monkeypatch)
    monkeypatch.setattr(simplify, "moc_inert", _never)  # these bodies are: MOC skips them
    remembered = ov_loops.translate(sequential_loops(5))
    assert len(calls) == 1
    monkeypatch.setattr(simplify, "_UNCHANGED", {})
    monkeypatch.setattr(simplify, "_remember", lambda digest: None)
    forgotten = ov_loops.translate(sequential_loops(5))
    assert len(calls) == 1 + 5
    assert [loop.spec for loop in remembered.loops] == [loop.spec for loop in forgotten.loops]
    assert [loop.optimizations for loop in remembered.loops] == [
        loop.optimizations for loop in forgotten.loops
    ]


def test_a_body_without_a_digest_runs_moc_every_time(monkeypatch):
    """nest3: the two outer bodies hold a Loop (no digest), the innermost MOC leaves alone
    (none of them found inert here: test_pass_simplify_inert.py)."""
    calls = _counting_moc(monkeypatch)
    monkeypatch.setattr(simplify, "moc_inert", _never)
    ov_loops.translate(nested_loops(3))
    assert len(calls) == 3 and len(simplify._UNCHANGED) == 1
    ov_loops.translate(nested_loops(3))
    assert len(calls) == 3 + 2
