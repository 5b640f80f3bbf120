"""proto/extension.py: onnx's shape inference, inliner and op schemas called in its C++
extension, answering as onnx's Python functions do, without importing the onnx package."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import onnx.defs
import onnx.inliner
import onnx.shape_inference
import pytest

import ov_loops
from ov_loops.errors import InputError
from ov_loops.frontends.onnx.proto import extension, inference
from tests.child_process import run_python_surviving
from tests.onnx_builders import graph, model, node, typed

ROOT = Path(__file__).resolve().parents[4]
CORPUS = sorted((ROOT / "tests" / "models" / "exporters").glob("*.onnx"))
BENCH = sorted((ROOT / "benchmarks" / "models").glob("*.onnx"))
T = onnx.TensorProto


def inferred_by_onnx(made: onnx.ModelProto, data_prop: bool) -> bytes | str:
    """onnx.shape_inference's answer, serialized, or its error's type and message."""
    try:
        inferred = onnx.shape_inference.infer_shapes(made, data_prop=data_prop)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return inferred.SerializeToString(deterministic=True)


def inferred_here(made: onnx.ModelProto, data_prop: bool) -> bytes | str:
    try:
        inferred = extension.infer_shapes(made, data_prop=data_prop)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return inferred.SerializeToString(deterministic=True)


@pytest.mark.parametrize("data_prop", [False, True])
def test_shape_inference_is_onnx_own_on_the_corpus(data_prop):
    """Every committed export and benchmark model: the same inferred model (or error)."""
    assert len(CORPUS) > 90 and BENCH
    for path in CORPUS + BENCH:
        made = onnx.load(path)
        want = inferred_by_onnx(made, data_prop)
        assert inferred_here(made, data_prop) == want, path.name


@pytest.mark.parametrize(
    "name", ["torch_rnn_stack", "torch_ts_kv_cache_list", "skl_knn_classifier_euclidean"]
)
def test_shape_inference_is_onnx_own_on_what_the_conversion_infers(name, monkeypatch):
    """The models the sequence rewrites (CarriedShapes, the sequence types) and the ai.onnx.ml
    rewrites infer while converting: onnx's answer to each of them."""
    path = next(p for p in CORPUS + BENCH if p.stem == name)
    original, asked = extension.infer_shapes, []
    monkeypatch.setattr(
        inference, "own_inference", lambda made, data_prop=False: None
    )  # onnx's answers all

    def compared(made, data_prop=False):  # the callers suppress errors: recorded, not raised
        inferred = original(made, data_prop)
        want = onnx.shape_inference.infer_shapes(made, data_prop=data_prop)
        asked.append(
            inferred.SerializeToString(deterministic=True)
            == want.SerializeToString(deterministic=True)
        )
        return inferred

    monkeypatch.setattr(extension, "infer_shapes", compared)
    ov_loops.convert(str(path))
    assert asked and all(asked), asked


def test_inference_error_is_onnx_own():
    """A model inference refuses (a node of a domain the model imports no opset of) raises
    the extension's error, which onnx.shape_inference names InferenceError, with its message."""
    made = model(
        graph([node("Relu", ["x"], ["y"])], [typed("x", T.FLOAT, [2])], [typed("y", T.FLOAT)])
    )
    del made.opset_import[:]
    with pytest.raises(onnx.shape_inference.InferenceError) as ours:
        extension.infer_shapes(made)
    assert "No opset import for domain" in str(ours.value)
    assert inferred_here(made, False) == inferred_by_onnx(made, False)


def test_inlining_is_onnx_own_on_the_corpus():
    """The one committed export with local functions (skl2onnx's KNNImputer), its functions'
    opsets as the model's: the same inlined model as onnx.inliner's."""
    made = onnx.load(next(p for p in CORPUS if p.stem == "skl_knn_imputer"))
    assert made.functions
    for function in made.functions:
        del function.opset_import[:]
        function.opset_import.extend(made.opset_import)
    want = onnx.inliner.inline_local_functions(made).SerializeToString(deterministic=True)
    got = extension.inline_local_functions(made)
    assert not got.functions or got.functions == made.functions
    assert got.SerializeToString(deterministic=True) == want


def test_inliner_error_is_refused_as_before(tmp_path):
    """A call of a local function with more inputs than it has: onnx's inliner raises; the
    conversion refuses the model in one line (InputError), as it did with onnx's function."""
    function = onnx.helper.make_function(
        "local",
        "Twice",
        ["a"],
        ["b"],
        [node("Add", ["a", "a"], ["b"])],
        [onnx.helper.make_opsetid("", 17)],
    )
    made = model(
        graph(
            [node("Twice", ["x", "x", "x"], ["y"], domain="local")],
            [typed("x", T.FLOAT, [2])],
            [typed("y", T.FLOAT, [2])],
        )
    )
    made.functions.append(function)
    made.opset_import.append(onnx.helper.make_opsetid("local", 1))
    with pytest.raises(Exception) as onnx_error:
        onnx.inliner.inline_local_functions(made)
    with pytest.raises(InputError, match="cannot inline the model's local functions") as ours:
        ov_loops.convert(made)
    assert str(onnx_error.value) in str(ours.value)


@pytest.mark.parametrize(
    ("op_type", "version", "domain"),
    [
        ("Add", 18, ""),
        ("ReduceMax", 16, ""),
        ("ReduceMax", 18, ""),
        ("Loop", 13, ""),
        ("ArrayFeatureExtractor", 3, "ai.onnx.ml"),
        ("Gelu", 20, ""),
    ],
)
def test_since_version_is_onnx_schema_own(op_type, version, domain):
    want = onnx.defs.get_schema(op_type, version, domain).since_version
    assert extension.since_version(op_type, version, domain) == want


@pytest.mark.parametrize(("op_type", "version"), [("Gelu", 17), ("NoSuchOp", 18)])
def test_since_version_of_no_op_is_none(op_type, version):
    with pytest.raises(onnx.defs.SchemaError):
        onnx.defs.get_schema(op_type, version)
    assert extension.since_version(op_type, version) is None


# A fresh process: convert a model of lists (sequence rewrites: shape inference), then print
# the modules of the onnx package loaded.
CONVERT_AND_LIST = """
import json, sys
import ov_loops.api
ov_loops.api.save(ov_loops.api.convert(sys.argv[1]), sys.argv[2])
print(json.dumps(sorted(name for name in sys.modules if name.split('.')[0] == 'onnx')))
"""


def test_converting_a_model_of_lists_does_not_import_onnx(tmp_path):
    """A torch export with lists is converted without onnx's extension (ov_loops' own shape
    inference covers it, proto/inference): no `onnx` package nor any of its Python modules
    but the message classes in sys.modules."""
    path = next(p for p in BENCH if p.stem == "torch_rnn_stack")
    result = run_python_surviving(
        ["-c", CONVERT_AND_LIST, str(path), str(tmp_path / "o.xml")], tmp_path
    )
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert "onnx" not in loaded
    assert loaded == []  # nor the extension: its op-schema registry stays empty
    assert (tmp_path / "o.xml").exists()


# A fresh process: onnx imported before or after a conversion that used the extension; one
# extension, onnx's functions work on the conversion's messages, a second conversion works.
BOTH_ORDERS = """
import sys
if sys.argv[1] == 'onnx first':
    import onnx
import ov_loops.api
from ov_loops.frontends.onnx.proto import extension, inference
first = ov_loops.api.convert(sys.argv[2])
import onnx, onnx.checker, onnx.shape_inference, onnx.defs
assert onnx.onnx_cpp2py_export is extension.extension()
assert onnx.shape_inference.C is extension.extension().shape_inference
made = onnx.load(sys.argv[2])
onnx.checker.check_model(made)
assert onnx.shape_inference.infer_shapes(made) == extension.infer_shapes(made)
assert onnx.defs.get_schema('Add', 18).since_version == extension.since_version('Add', 18)
second = ov_loops.api.convert(sys.argv[2])
assert len(first.get_ops()) == len(second.get_ops())
print('ok')
"""


@pytest.mark.parametrize("order", ["onnx first", "ov_loops first"])
def test_onnx_imported_before_or_after_shares_the_extension(order, tmp_path):
    path = next(p for p in BENCH if p.stem == "torch_rnn_stack")
    result = run_python_surviving(["-c", BOTH_ORDERS, order, str(path)], tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_converted_local_function_model_runs_without_onnx(tmp_path):
    """The inliner and op-schema lookups (a function at an older opset) in a fresh process:
    converted, and no `onnx` package imported."""
    from tests.frontends.onnx.test_onnx_input import summing_function_model

    path = tmp_path / "f.onnx"
    onnx.save(summing_function_model(16), path)
    result = run_python_surviving(
        ["-c", CONVERT_AND_LIST, str(path), str(tmp_path / "o.xml")], tmp_path
    )
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = json.loads(result.stdout.splitlines()[-1])
    assert "onnx" not in loaded and "onnx.onnx_cpp2py_export.inliner" in loaded
