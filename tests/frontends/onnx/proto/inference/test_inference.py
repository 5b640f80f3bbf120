"""proto/inference: ov_loops' shape inference gives onnx's answer on every model it covers:
the committed exports, the benchmark models, the sequence scenarios, and every model the
conversion of a model of lists infers (CarriedShapes' rounds, the sequence types)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

import ov_loops.api
from ov_loops.frontends.onnx.proto import extension, inference
from tests.onnx_builders import graph, model, node, typed
from tests.sequence_append_scenarios import APPENDED, NOT_APPENDED
from tests.sequence_scenarios import SEQUENCE_SCENARIOS
from tests.shape_inference_compare import compared

ROOT = Path(__file__).resolve().parents[5]
CORPUS = sorted((ROOT / "tests" / "models" / "exporters").glob("*.onnx"))
BENCH = sorted((ROOT / "benchmarks" / "models").glob("*.onnx"))
SCENARIOS = {**SEQUENCE_SCENARIOS, **APPENDED, **NOT_APPENDED}
T = onnx.TensorProto


def _has_sequences(path: Path) -> bool:
    made = onnx.load(path, load_external_data=False)
    return "Sequence" in str(made.graph) and "sequence_type" in str(made.graph)


LISTS = [path for path in CORPUS + BENCH if _has_sequences(path)]


def _covered_and_equal(made: onnx.ModelProto, data_prop: bool, where: str) -> bool:
    found = compared(made, data_prop)
    assert not found, (where, found[:5])
    return found is not None


@pytest.mark.parametrize("data_prop", [False, True])
def test_same_answer_as_onnx_on_the_corpus(data_prop, capsys):
    """Every committed export, benchmark model and sequence scenario, data_prop off and on:
    where ov_loops' inference answers, onnx's answer up to the names of made-up symbols."""
    assert len(CORPUS) > 90 and len(BENCH) == 4 and len(SCENARIOS) > 20
    models = [(path.name, onnx.load(path)) for path in CORPUS + BENCH]
    models += [(name, build()[0]) for name, build in SCENARIOS.items()]
    covered = [name for name, made in models if _covered_and_equal(made, data_prop, name)]
    assert {path.name for path in BENCH} <= set(covered)
    with capsys.disabled():
        print(f"\nown inference covers {len(covered)} of {len(models)} models: {covered}")


@pytest.mark.parametrize("path", LISTS, ids=lambda path: path.stem)
def test_same_answer_as_onnx_on_what_the_conversion_infers(path, monkeypatch):
    """Each model the conversion of a model of lists infers: onnx's answer where ours
    answers (and, on the benchmark models, ours answers every time: onnx's is not called)."""
    asked, onnx_asked, original = [], [], inference.own_inference

    def recorded(made, data_prop=False):
        answer = original(made, data_prop)
        asked.append(answer is not None)
        copy = onnx.ModelProto()
        copy.CopyFrom(made)
        onnx_asked.append(copy)
        return answer

    monkeypatch.setattr(inference, "own_inference", recorded)
    ov_loops.api.translate(str(path))
    assert asked
    monkeypatch.setattr(inference, "own_inference", original)
    for made in onnx_asked:
        for data_prop in (False, True):
            _covered_and_equal(made, data_prop, path.name)
    if path in BENCH:
        assert all(asked)


def test_uncovered_model_gets_onnx_answer():
    """An op without a rule (Reshape): inference.infer_shapes answers onnx's, as before."""
    made = model(
        graph(
            [node("Reshape", ["x", "s"], ["y"])],
            [typed("x", T.FLOAT, [2, 3]), typed("s", T.INT64, [1])],
            [typed("y", T.FLOAT)],
        )
    )
    assert inference.own_inference(made) is None
    assert inference.infer_shapes(made) == extension.infer_shapes(made)


def test_a_conflict_is_left_to_onnx():
    """A declared output type that contradicts the inferred one: ours does not answer, and
    inference.infer_shapes answers what onnx answers."""
    made = model(
        graph(
            [node("Tanh", ["x"], ["y"])], [typed("x", T.FLOAT, [2, 3])], [typed("y", T.FLOAT, [4])]
        )
    )
    assert inference.own_inference(made) is None
    assert inference.infer_shapes(made) == onnx.shape_inference.infer_shapes(made)
