"""ov_loops.owned_save: a model nobody else holds written in place writes the files
`ov.save_model` writes from its clone (the .bin byte for byte, the XML line for line), weights
counted for the choice between them."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops.api
from ov_loops import ovgraph
from ov_loops.owned_save import CLONE_BYTES_PER_OP, RUNTIME_KEY, census, save_owned

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "models"


def _named_weights_model() -> ov.Model:
    """y = x @ W + b, W and b f32 Constants whose outputs carry tensor names, and an f16
    Constant already decompressed by a Convert of the model's own (its names stay on it)."""
    x = ops.parameter([1, 8], np.float32, name="x")
    weights = ops.constant(np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32))
    weights.output(0).get_tensor().set_names({"W"})
    bias = ops.constant(np.arange(8, dtype=np.float16))
    decompressed = ops.convert(bias, np.float32)
    decompressed.output(0).get_tensor().set_names({"b"})
    y = ops.add(ops.matmul(x, weights, False, False), decompressed)
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([y], [x], "named")


def _write_both(model: ov.Model, directory: Path, compress: bool) -> tuple[Path, Path]:
    """save_model's files (the model is left as it was) then save_owned's."""
    cloned, owned = directory / "cloned.xml", directory / "owned.xml"
    ov.save_model(model, str(cloned), compress_to_fp16=compress)
    save_owned(model, owned, compress)
    return cloned, owned


def _assert_same_files(cloned: Path, owned: Path) -> None:
    assert filecmp.cmp(cloned.with_suffix(".bin"), owned.with_suffix(".bin"), shallow=False)
    assert cloned.read_text().splitlines() == owned.read_text().splitlines()


@pytest.mark.parametrize("compress", [True, False], ids=["f16", "f32"])
def test_save_owned_writes_what_save_model_writes(tmp_path, compress):
    model = _named_weights_model()
    cloned, owned = _write_both(model, tmp_path, compress)
    _assert_same_files(cloned, owned)
    assert RUNTIME_KEY in owned.read_text()
    kinds = {
        op.get_output_element_type(0).get_type_name()
        for op in ov.Core().read_model(str(owned)).get_ops()
        if op.get_type_name() == "Constant"
    }
    assert kinds == ({"f16"} if compress else {"f32", "f16"})


@pytest.mark.parametrize("name", ["torch_rnn_stack", "torch_nested_lists"])
def test_save_owned_writes_what_save_model_writes_for_real_exports(tmp_path, name):
    """Loops, their bodies' weights, sequences (torch exports with lists)."""
    model = ov_loops.api.translate(BENCH / f"{name}.onnx").model
    cloned, owned = _write_both(model, tmp_path, True)
    _assert_same_files(cloned, owned)


def test_a_saved_model_computes_what_it_did(tmp_path):
    model = _named_weights_model()
    feed = np.random.default_rng(1).standard_normal((1, 8)).astype(np.float32)
    expected = ov.Core().compile_model(model, "CPU")(feed)[0]
    save_owned(model, tmp_path / "owned.xml", True)
    got = ov.Core().compile_model(str(tmp_path / "owned.xml"), "CPU")(feed)[0]
    np.testing.assert_allclose(got, expected, rtol=2e-3, atol=2e-3)  # f16 weights


def test_census_counts_ops_f32_bytes_and_f64():
    model = _named_weights_model()
    weights = census(model)
    assert weights.ops == len(list(ovgraph.all_ops(model)))
    assert weights.f32_bytes == 8 * 8 * 4
    assert not weights.has_f64
    x = ops.parameter([2], np.float64)
    with_f64 = ov.Model([ops.add(x, ops.constant(np.ones(2)))], [x])
    assert census(with_f64).has_f64


def test_big_weights_make_the_copy_dearer_than_the_clone():
    x = ops.parameter([1, 1024], np.float32)
    rows = 4 * CLONE_BYTES_PER_OP // 1024 + 1  # f16 copy > a clone of the model's few ops
    big = ops.constant(np.ones((1024, rows), np.float32))
    model = ov.Model([ops.matmul(x, big, False, False)], [x])
    assert not census(model).in_place_is_cheaper(True)
    assert census(model).in_place_is_cheaper(False)  # nothing copied
    assert census(_named_weights_model()).in_place_is_cheaper(True)
    assert not census(_named_weights_model()).in_place_is_cheaper(True, 1 << 20)
