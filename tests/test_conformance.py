"""Conformance: every ONNX backend node test (shipped with onnx) holding a Loop or a Scan.

Each case converts, saves as clean IR (no TensorIterator, only Loop-5), reloads, compiles on CPU
in f32 and reproduces the case's expected outputs with the case's tolerances, or is an expected
failure with its reason.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.frontends.onnx.placeholders import is_standard_loop
from ov_loops.frontends.onnx.scopes import subgraphs
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

SEQUENCES_NOT_YET = "Sequence/Optional loop-carried values are not supported yet"
EXPECTED_FAILURES = {
    "test_loop13_seq": SEQUENCES_NOT_YET,
    "test_loop16_seq_none": SEQUENCES_NOT_YET,
    **{name: SEQUENCES_NOT_YET for name in LOOP_CASES if name.startswith("test_sequence_map_")},
}


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


PASSING = sorted(set(LOOP_CASES) - set(EXPECTED_FAILURES))


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
        got = run(compiled, list(inputs))
        assert len(got) == len(expected_outputs)
        for index, expected in enumerate(expected_outputs):
            expected = np.asarray(expected)
            if expected.dtype.name == "bfloat16":
                expected, actual = expected.astype(np.float32), got[index].astype(np.float32)
            else:
                actual = got[index]
            assert_close(expected, actual, f"{name} output {index}", case.rtol, case.atol)


@pytest.mark.parametrize("name", sorted(EXPECTED_FAILURES))
def test_backend_case_expected_failure(name):
    """Expected failures fail the documented way: one UnsupportedError naming the Loop."""
    with pytest.raises(ov_loops.UnsupportedError) as failure:
        ov_loops.translate(LOOP_CASES[name].model)
    message = str(failure.value)
    assert "not supported yet" in message and ("/Loop_" in message or "/Scan_" in message), message
    assert "\n" not in message
