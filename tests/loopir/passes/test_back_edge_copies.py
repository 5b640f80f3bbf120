"""Back-edge copies only where a back edge can share memory with a sliced part (CopyBackEdges).

Bodies that need the copy get it and run right on the CPU; bodies that do not, run right without
it; and without the copy the CPU plugin still computes `acc + x_t * w` and swapped states wrong
(the evidence the copy is needed: that test fails when OpenVINO fixes the faults). The bodies
and model builders are those of benchmarks/back_edge_aliasing.py, the research behind the rule.
"""

from __future__ import annotations

from unittest import mock

import pytest

import ov_loops
from benchmarks.back_edge_aliasing import loop_model, runs_of, scan_model
from benchmarks.back_edge_copy_cost import copies
from benchmarks.rnn_loop import rnn_loop_model
from ov_loops.loopir.passes.back_edges import CopyBackEdges
from tests.harness import assert_matches_onnxruntime, reference_oracle

ACCUMULATE = (("Mul", ["x_t", "w"], "v0"), ("Add", ["c0_in", "v0"], "v1"))
NEEDING = {
    "acc + x_t * w": (1, ACCUMULATE, ("v1", "v1")),
    "tanh(acc + x_t * w)": (1, (*ACCUMULATE, ("Tanh", ["v1"], "v2")), ("v2", "v2")),
    "state = the current slice": (1, (), ("x_t", "c0_in")),
    "state = Reshape(slice)": (1, (("Reshape", ["x_t"], "v0"),), ("v0", "c0_in")),
    "state = slice * 1": (1, (("MulOne", ["x_t"], "v0"),), ("v0", "v0")),
    "two states, one a view of the slice": (
        2,
        (("UnsqueezeSqueeze", ["x_t"], "v0"), ("Add", ["c0_in", "c1_in"], "v1")),
        ("v1", "v0", "v1"),
    ),
    "states swap": (2, (("Add", ["c0_in", "x_t"], "v0"),), ("c1_in", "c0_in", "v0")),
    "state = Reshape(other state)": (
        2,
        (("Reshape", ["c1_in"], "v0"), ("Max", ["c1_in", "w"], "v1")),
        ("v0", "v1", "v1"),
    ),
}
NOT_NEEDING = {
    "tanh(acc * w)": (1, (("Mul", ["c0_in", "w"], "v0"), ("Tanh", ["v0"], "v1")), ("v1", "v1")),
    "state = slice @ m": (1, (("MatMul", ["x_t"], "v0"),), ("v0", "v0")),
    "tanh(x_t @ m + acc @ m)": (
        1,
        (
            ("MatMul", ["x_t"], "v0"),
            ("MatMul", ["c0_in"], "v1"),
            ("Add", ["v0", "v1"], "v2"),
            ("Tanh", ["v2"], "v3"),
        ),
        ("v3", "v3"),
    ),
    "two states add up": (
        2,
        (("Add", ["c0_in", "c1_in"], "v0"), ("Mul", ["c1_in", "w"], "v1")),
        ("v0", "v1", "v0"),
    ),
}


def _made(body, scan: bool):
    return (scan_model if scan else loop_model)(*body)


def _translated(model):
    """The translation the copy rule sees (optimisations such as hoisting a slice's MatMul
    out of the body change which back edges reach a slice)."""
    return ov_loops.translate(model, optimize="none")


def _check(body, scan: bool, directory, translate=_translated) -> ov_loops.Conversion:
    """Convert, then run four inferences in a row (a zero-trip one among them for Loops)."""
    runs = runs_of(body, scan, seed=3)
    made = _made(body, scan)
    return assert_matches_onnxruntime(
        made, runs, directory, oracle=reference_oracle, translate=translate
    )


@pytest.mark.parametrize("scan", [False, True], ids=["Loop", "Scan"])
@pytest.mark.parametrize("body", NEEDING.values(), ids=NEEDING.keys())
def test_a_back_edge_that_may_share_a_slice_is_copied_and_runs_right(body, scan, tmp_path):
    conversion = _check(body, scan, tmp_path)
    assert copies(conversion.model) >= 1


@pytest.mark.parametrize("scan", [False, True], ids=["Loop", "Scan"])
@pytest.mark.parametrize("body", NOT_NEEDING.values(), ids=NOT_NEEDING.keys())
def test_a_back_edge_that_cannot_share_a_slice_runs_right_uncopied(body, scan, tmp_path):
    conversion = _check(body, scan, tmp_path)
    assert copies(conversion.model) == 0


def test_the_bench_rnn_carries_no_copy():
    """h = tanh(x_t W + h R + b): the Tanh reads MatMuls only."""
    assert copies(_translated(rnn_loop_model(8)).model) == 0


@pytest.mark.parametrize("scan", [False, True], ids=["Loop", "Scan"])
@pytest.mark.parametrize("name", ["acc + x_t * w"])
def test_without_the_copy_the_cpu_plugin_computes_wrong(name, scan, tmp_path):
    """(The swapped states, wrong uncopied when the rule was found, no longer show the fault
    once the default passes have rewritten the body; they keep their copy by rule 2.)"""
    body = NEEDING[name]
    never = staticmethod(lambda value, loop: False)
    with mock.patch.object(CopyBackEdges, "needs_copy", never):
        conversion = ov_loops.translate(_made(body, scan))  # as found: at the default level
    assert copies(conversion.model) == 0
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        _check(body, scan, tmp_path, translate=lambda _: conversion)
