"""ov_loops.staging.stage: a model is written in place where that costs less memory than
save_model's clone, keeping f64 weights and `compress_to_fp16=False` as save_model does; the
API's save (a model the caller holds) puts the model back as it was, `ov-loops convert` (which
owns its model) does not need to."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops.api
from benchmarks.generated_models import sequential_loops
from ov_loops import ovgraph, staging
from ov_loops.checking.weights import f16_weights
from ov_loops.owned_save import CLONE_BYTES_PER_OP
from tests.conversion.test_f64 import f64_loop_model
from tests.onnx_builders import T

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "models"


def _snapshot(model: ov.Model) -> list:
    """Everything `save` could change: each op (bodies' too) with its type, names, output
    types and shapes, tensor names, rt_info and a Constant's values; the model's rt_info."""
    seen = [str(model.get_rt_info())]
    for op in ovgraph.all_ops(model):
        outputs = [
            (str(port.get_element_type()), str(port.get_partial_shape()), sorted(port.get_names()))
            for port in op.outputs()
        ]
        values = op.get_data().tobytes() if op.get_type_name() == "Constant" else None
        sources = [(value.get_node().get_name(), value.get_index()) for value in op.input_values()]
        seen.append((op.get_type_name(), op.get_name(), op.get_friendly_name(), outputs))
        seen.append((sources, str(op.get_rt_info()), values))
    return seen


def _run(model: ov.Model, feeds: dict) -> list[np.ndarray]:
    compiled = ov.Core().compile_model(model, "CPU")
    return [np.array(value) for value in compiled(feeds).values()]


@pytest.mark.parametrize("compress", [True, False], ids=["f16", "f32"])
def test_api_save_leaves_the_callers_model_as_it_was(tmp_path, compress):
    model = ov_loops.api.translate(BENCH / "torch_rnn_stack.onnx").model
    feeds = {
        port.get_any_name(): np.random.default_rng(0)
        .standard_normal(port.get_partial_shape().get_min_shape())
        .astype(np.float32)
        for port in model.inputs
    }
    before, results = _snapshot(model), _run(model, feeds)
    ov_loops.api.save(model, tmp_path / "model.xml", compress_to_fp16=compress)
    assert _snapshot(model) == before
    for got, expected in zip(_run(model, feeds), results, strict=True):
        np.testing.assert_array_equal(got, expected)


def _spied(monkeypatch) -> list[str]:
    """Which writer stage uses: 'save_model', 'owned' or 'borrowed', appended per call."""
    used: list[str] = []
    save_model, save_owned = ov.save_model, staging.save_owned
    save_borrowed = staging.BorrowedModel.save

    def spy_save_model(*args, **kwargs):
        used.append("save_model")
        save_model(*args, **kwargs)

    def spy_owned(*args, **kwargs):
        used.append("owned")
        save_owned(*args, **kwargs)

    def spy_borrowed(*args, **kwargs):
        used.append("borrowed")
        save_borrowed(*args, **kwargs)

    monkeypatch.setattr(ov, "save_model", spy_save_model)
    monkeypatch.setattr(staging, "save_owned", spy_owned)
    monkeypatch.setattr(staging.BorrowedModel, "save", spy_borrowed)
    return used


def _big_weights_model() -> ov.Model:
    x = ops.parameter([1, 1024], np.float32)
    rows = 4 * CLONE_BYTES_PER_OP // 1024 + 1
    return ov.Model(
        [ops.matmul(x, ops.constant(np.ones((1024, rows), np.float32)), False, False)], [x]
    )


def _model(kind: str) -> ov.Model:
    """'big' weights, 'many' ops (696), or a 'small' loop model."""
    if kind == "big":
        return _big_weights_model()
    return ov_loops.api.convert(sequential_loops(40) if kind == "many" else f64_loop_model(T.FLOAT))


@pytest.mark.parametrize(
    ("owned", "kind", "compress", "writer"),
    [
        (False, "small", True, "save_model"),  # putting back costs more than a small clone
        (False, "many", True, "borrowed"),
        (False, "big", True, "save_model"),
        (False, "many", False, "borrowed"),
        (True, "small", True, "owned"),
        (True, "big", True, "save_model"),
        (True, "big", False, "owned"),  # no compression: nothing copied
    ],
)
def test_stage_writes_in_place_where_that_costs_less_than_the_clone(
    tmp_path, monkeypatch, owned, kind, compress, writer
):
    used = _spied(monkeypatch)
    staged = staging.stage(_model(kind), tmp_path / "m.xml", compress, owned=owned)
    assert used == [writer]
    assert staged.weights == ("f16" if compress else "f32")
    assert ov.Core().read_model(str(staged.xml)) is not None


@pytest.mark.parametrize("owned", [False, True], ids=["api", "owned"])
def test_stage_keeps_f64_weights_either_way(tmp_path, owned):
    staged = staging.stage(ov_loops.api.convert(f64_loop_model()), tmp_path / "m.xml", owned=owned)
    saved = ov.Core().read_model(str(staged.xml))
    assert staged.weights == "f32"
    assert f16_weights(saved) == 0
    kinds = {
        op.get_output_element_type(0).get_type_name()
        for op in ovgraph.all_ops(saved)
        if op.get_type_name() == "Constant"
    }
    assert "f64" in kinds
