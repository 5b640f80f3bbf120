"""Conformance: every ONNX backend node test (shipped with onnx) holding a Loop or a Scan.

Each case converts, saves as clean IR (no TensorIterator, only Loop-5), reloads, compiles on CPU
in f32 and reproduces the case's expected outputs with the case's tolerances (a sequence input or
output fed and read as lists through ov_loops.sequence_values).
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.frontends.onnx.placeholders import is_standard_loop
from ov_loops.frontends.onnx.scopes import subgraphs
from ov_loops.sequence_values import from_ir_outputs, has_sequence_io, to_ir_inputs
from tests.harness import assert_close, compile_f32, run, save_and_reload

with warnings.catch_warnings():  # the onnx test generators warn about overflowing casts
    warnings.simplefilter("ignore")
    from onnx.backend.test.loader import load_model_tests

    ALL_CASES = load_model_tests(kind="node")


def _contains_loop(graph: onnx.GraphProto) -> bool:
    return any(
        is_standard_loop(node) or any(_contains_loop(sub) for _, sub in subgraphs(node))
        for node in graph.node
    )


def _holds_loop(model: onnx.ModelProto) -> bool:
    functions = [onnx.helper.make_graph(f.node, f.name, [], []) for f in model.functions]
    return any(_contains_loop(graph) for graph in [model.graph, *functions])


LOOP_CASES = {case.name: case for case in ALL_CASES if _holds_loop(case.model)}


def test_the_loop_and_scan_cases_were_found():
    expected = {
        "test_loop11",
        "test_loop13_seq",
        "test_range_float_type_positive_delta_expanded",
        "test_scan_sum",
        "test_scan9_sum",
        "test_linear_attention_linear_expanded",
    }
    assert expected <= set(LOOP_CASES)
    assert len(LOOP_CASES) == 31, sorted(LOOP_CASES)


# The cases whose model inputs or outputs are sequences (Python lists).
SEQUENCE_IO = {name for name, case in LOOP_CASES.items() if has_sequence_io(case.model)}
PASSING = sorted(LOOP_CASES)


def test_sequence_io_cases_were_found():
    assert "test_loop13_seq" in SEQUENCE_IO and len(SEQUENCE_IO) == 8, sorted(SEQUENCE_IO)


@pytest.mark.parametrize("name", PASSING)
def test_backend_case_passes(name, tmp_path):
    assert_backend_case_passes(name, tmp_path)


def assert_backend_case_passes(name: str, tmp_path, optimize: str = "default") -> None:
    """Case `name`, converted at the optimisation level `optimize`, gives its outputs."""
    case = LOOP_CASES[name]
    conversion = ov_loops.translate(case.model, optimize=optimize)
    reloaded, _ = save_and_reload(conversion.model, tmp_path, conversion)
    compiled = compile_f32(reloaded)
    for inputs, expected_outputs in case.data_sets:
        # Sequence inputs and outputs are lists: the converted model has their tensor parts.
        got = from_ir_outputs(case.model, run(compiled, to_ir_inputs(case.model, list(inputs))))
        assert_outputs_close(name, expected_outputs, got, case.rtol, case.atol)


def assert_outputs_close(name: str, expected_outputs, got: list, rtol: float, atol: float) -> None:
    """Each output as expected; a sequence output (a list) element by element."""
    assert len(got) == len(expected_outputs)
    for index, expected in enumerate(expected_outputs):
        if isinstance(expected, list):
            assert len(got[index]) == len(expected), f"{name} output {index}: length"
            pairs = [(f"{name} output {index}[{k}]", e, g) for k, (e, g) in
                     enumerate(zip(expected, got[index]))]  # fmt: skip
        else:
            pairs = [(f"{name} output {index}", expected, got[index])]
        for what, wanted, actual in pairs:
            _assert_element_close(wanted, actual, what, rtol, atol)


def _assert_element_close(expected, actual, what: str, rtol: float, atol: float) -> None:
    expected = np.asarray(expected)
    if expected.dtype.name == "bfloat16":
        expected, actual = expected.astype(np.float32), actual.astype(np.float32)
    assert_close(expected, actual, what, rtol, atol)
