"""Conformance: every ONNX backend node test (shipped with onnx) holding a Loop or a Scan.

Each case converts, saves as clean IR (no TensorIterator, only Loop-5), reloads, compiles on CPU
in f32 and reproduces the case's expected outputs with the case's tolerances (a sequence input or
output fed and read as lists through ov_loops.frontends.onnx.sequence_io).
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.frontends.onnx.ops.registry import is_loop_op
from ov_loops.frontends.onnx.proto.scopes import subgraphs
from ov_loops.frontends.onnx.sequence_io import from_ir_outputs, has_sequence_io, to_ir_inputs
from tests.harness import assert_close, compile_f32, run, save_and_reload

with warnings.catch_warnings():  # the onnx test generators warn about overflowing casts
    warnings.simplefilter("ignore")
    from onnx.backend.test.loader import load_model_tests

    CASES = load_model_tests(kind="node")


def _value(declared: onnx.TypeProto, path: Path):
    """A test data file as the runner reads it: an array, a list (sequence) or an optional."""
    kind = declared.WhichOneof("value")
    made = {"sequence_type": onnx.SequenceProto, "optional_type": onnx.OptionalProto}.get(
        kind, onnx.TensorProto
    )()
    made.ParseFromString(path.read_bytes())
    if kind == "sequence_type":
        return onnx.numpy_helper.to_list(made)
    if kind == "optional_type":
        return onnx.numpy_helper.to_optional(made)
    return onnx.numpy_helper.to_array(made)


def _loaded(case):
    """`case` with its model and data sets: onnx before 1.22 leaves them in its directory."""
    if case.model is not None and case.data_sets is not None:
        return case
    directory = Path(case.model_dir)
    made = onnx.load(directory / "model.onnx")
    data_sets = [
        tuple(
            [_value(v.type, folder / f"{kind}_{k}.pb") for k, v in enumerate(values)]
            for kind, values in (("input", made.graph.input), ("output", made.graph.output))
        )
        for folder in sorted(directory.glob("test_data_set_*"))
    ]
    return dataclasses.replace(case, model=made, data_sets=data_sets)


def _holds_loop_in_file(case) -> bool:
    return _holds_loop(case.model if case.model is not None else onnx.load(
        Path(case.model_dir) / "model.onnx"))  # fmt: skip


def _contains_loop(graph: onnx.GraphProto) -> bool:
    return any(
        is_loop_op(node) or any(_contains_loop(sub) for _, sub in subgraphs(node))
        for node in graph.node
    )


def _holds_loop(model: onnx.ModelProto) -> bool:
    functions = [onnx.helper.make_graph(f.node, f.name, [], []) for f in model.functions]
    return any(_contains_loop(graph) for graph in [model.graph, *functions])


LOOP_CASES = {case.name: _loaded(case) for case in CASES if _holds_loop_in_file(case)}


def test_the_loop_and_scan_cases_were_found():
    expected = {
        "test_loop11",
        "test_loop13_seq",
        "test_range_float_type_positive_delta_expanded",
        "test_scan_sum",
        "test_scan9_sum",
        "test_linear_attention_linear_expanded",
    }
    shipped = {case.name for case in CASES}  # older onnx releases ship fewer cases
    assert expected & shipped <= set(LOOP_CASES)
    if onnx.__version__.startswith("1.23."):
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
