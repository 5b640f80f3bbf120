"""`check` on ONNX models with Sequence- and Optional-typed inputs: generated (a few elements of
the declared element type and shape), or given as elements (a list, or NAME[k] arrays in an
.npz) or as the four tensors a converted model takes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.contract.kinds import pack_sequence
from ov_loops.errors import InputError
from tests.harness import assert_one_line_error, run_cli
from tests.onnx_builders import T, graph, model, node, typed
from tests.sequence_scenarios import seq
from tests.test_conformance import LOOP_CASES, SEQUENCE_IO

F = np.float32


@pytest.mark.parametrize("name", sorted(SEQUENCE_IO))
def test_check_generates_sequence_inputs_of_backend_cases(name, tmp_path):
    onnx.save(LOOP_CASES[name].model, tmp_path / "model.onnx")
    report = ov_loops.check(tmp_path / "model.onnx")
    assert report.ok, "\n".join(report.lines())
    sizes = [row for row in report.rows if row.name.endswith(".sizes")]
    assert sizes and all(row.shape[0] > 0 for row in sizes), "\n".join(report.lines())


def _identity_of_a_list():
    """y = x (a sequence of float [N]) and its length."""
    main = graph(
        [node("Identity", ["x"], ["y"]), node("SequenceLength", ["x"], ["n"])],
        [onnx.helper.make_tensor_sequence_value_info("x", T.FLOAT, ["N"])],
        [seq("y"), typed("n", T.INT64, [])],
    )
    return model(main, 18)


def _elements_out(report) -> int:
    """The number of elements of output y (the length of y.sizes)."""
    return next(row.shape[0] for row in report.rows if row.name == "y.sizes")


@pytest.mark.parametrize(
    "given",
    [
        {"x": [np.ones(5, F), np.arange(5, dtype=F)]},
        {"x[0]": np.ones(5, F), "x[1]": np.arange(5, dtype=F)},
        dict(zip(["x", "x.sizes", "x.ranks", "x.shapes"], pack_sequence([[1, 2], [3, 4]], F))),
    ],
    ids=["list", "indexed", "tensors"],
)
def test_sequence_inputs_given_as_elements_or_tensors(given, tmp_path):
    onnx.save(_identity_of_a_list(), tmp_path / "model.onnx")
    report = ov_loops.check(tmp_path / "model.onnx", inputs=given)
    assert report.ok and _elements_out(report) == 2, "\n".join(report.lines())
    generated = ov_loops.check(tmp_path / "model.onnx", shapes={"x": (4,)})
    assert generated.ok and _elements_out(generated) == 3
    assert next(r.shape for r in generated.rows if r.name == "y") == (12,)  # 3 elements of [4]


def test_cli_check_reads_sequence_elements_from_npz(tmp_path):
    onnx.save(_identity_of_a_list(), tmp_path / "model.onnx")
    np.savez(tmp_path / "in.npz", **{f"x[{k}]": np.full(3, k, F) for k in range(4)})
    result = run_cli("check", str(tmp_path / "model.onnx"), "--inputs", str(tmp_path / "in.npz"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert any(line.split()[:2] == ["y.sizes", "[4]"] for line in result.stdout.splitlines())


def _length_of_a_list_of_unknown_rank():
    main = graph([node("SequenceLength", ["s"], ["n"])], [seq("s")], [typed("n", T.INT64, [])])
    return model(main, 18)


@pytest.mark.parametrize(
    "given, fragment",
    [
        ({}, "input 's' is a sequence of elements of unknown rank: give --shape s=D0,D1"),
        ({"s[0]": np.ones(2, F), "s[2]": np.ones(2, F)}, "elements [0, 2] given, not 0, 1"),
        ({"s.sizes": np.ones(1, np.int64)}, "or all its tensors s, s.sizes, s.ranks, s.shapes"),
    ],
    ids=["unknown-rank", "gap", "some-tensors"],
)
def test_bad_sequence_inputs_are_one_line_errors(given, fragment, tmp_path):
    onnx.save(_length_of_a_list_of_unknown_rank(), tmp_path / "model.onnx")
    with pytest.raises(InputError, match=fragment.replace("[", r"\[")):
        ov_loops.check(tmp_path / "model.onnx", inputs=given)
    report = ov_loops.check(tmp_path / "model.onnx", shapes={"s": (2, 3)})
    assert report.ok and report.rows[0].shape == ()


def test_cli_sequence_input_of_unknown_rank_is_one_line(tmp_path):
    onnx.save(_length_of_a_list_of_unknown_rank(), tmp_path / "model.onnx")
    result = run_cli("check", str(tmp_path / "model.onnx"))
    assert_one_line_error(result, 2, "input 's' is a sequence", "--shape s=")
