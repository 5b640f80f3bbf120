"""ov_loops.borrowed_save: `ov_loops.save` writes the caller's model in place and puts it back as
it was: `ov.serialize` writes the same XML and .bin after, every op (bodies' too) has the same
type, names, output types, shapes and tensor names, inputs and rt_info in the same order, the
model the same rt_info and port names, it computes the same; the files are `ov-loops convert`'s
(save_owned's) and, where save_model's clone drops nothing (owned_save's module), save_model's;
an error while writing leaves the model as it was and nothing written."""

from __future__ import annotations

import filecmp
from pathlib import Path

import numpy as np
import openvino as ov
import openvino._offline_transformations as offline
import openvino.opset15 as ops
import pytest

import ov_loops.api
from benchmarks.generated_models import sequential_loops
from ov_loops import ovgraph, staging
from ov_loops.borrowed_save import BorrowedModel
from ov_loops.errors import InputError
from ov_loops.owned_save import census, save_owned
from tests.harness import compile_f32
from tests.models.corpus import CORPUS, models

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "models"
SAMPLE = (  # exporters, loops, If, sequences, f64 (saved uncompressed), save_model's quirks
    "jax_linen_stacked_gru_lstm",
    "jax_lax_scan_nested",
    "tf_keras_bidirectional_gru",
    "tf_while_loop_f64",
    "skl_knn_classifier_cosine",
    "onnxscript_if_in_for",
    "torch_dynamo_scan_rnn",
    "torch_ts_beam_search_topk",
)
BENCH_NAMES = tuple(sorted(path.stem for path in BENCH.glob("*.onnx")))


SAVED: list[Path] = []  # the IRs BorrowedModel.save wrote in the test


@pytest.fixture(autouse=True)
def _in_place(monkeypatch):
    """`ov_loops.save` writes even a small model in place (by default save_model's clone of
    a few ops costs less than putting the model back: test_staging); SAVED says it did."""
    monkeypatch.setattr(staging, "PUT_BACK_BYTES", 0)
    SAVED.clear()
    save = BorrowedModel.save

    def saved(borrowed: BorrowedModel, xml: Path, compress_to_fp16: bool) -> None:
        SAVED.append(xml)
        save(borrowed, xml, compress_to_fp16)

    monkeypatch.setattr(BorrowedModel, "save", saved)


def _text(value: ov.OVAny | dict) -> str:
    if isinstance(value, dict):  # a map in a model's rt_info
        return str(sorted((key, _text(each)) for key, each in value.items()))
    try:
        return value.astype(str)
    except (RuntimeError, TypeError):
        return "<not text>"  # the serialised XML compares what the serialiser writes of it


def _rt_info(rt_info: ov.RTMap) -> list[tuple[str, str]]:
    return sorted((key, _text(value)) for key, value in rt_info.items())


def _state(model: ov.Model, directory: Path) -> tuple:
    """What a caller could observe of `model` (see the module)."""
    seen = []  # before serialising: it validates, which gives a Result's names to its source
    for op in ovgraph.all_ops(model):
        outputs = [
            (port.get_element_type(), str(port.get_partial_shape()), sorted(port.get_names()))
            for port in op.outputs()
        ]
        sources = [(value.get_node().get_name(), value.get_index()) for value in op.input_values()]
        seen.append((op.get_type_name(), op.get_name(), op.get_friendly_name(), outputs, sources))
        seen.append(_rt_info(op.get_rt_info()))
    ports = [sorted(port.get_names()) for port in (*model.inputs, *model.outputs)]
    directory.mkdir(exist_ok=True)
    xml = directory / f"state{len(list(directory.iterdir()))}.xml"
    ov.serialize(model, str(xml))
    files = (xml.read_bytes(), xml.with_suffix(".bin").read_bytes())
    return files, seen, _rt_info(model.get_rt_info()), ports


def _assert_same_files(one: Path, other: Path) -> None:
    assert filecmp.cmp(one.with_suffix(".bin"), other.with_suffix(".bin"), shallow=False)
    assert one.read_text().splitlines() == other.read_text().splitlines()


def _feeds(model: ov.Model) -> dict:
    """Random inputs, each dynamic dim 3."""
    rng = np.random.default_rng(0)
    feeds = {}
    for port in model.inputs:
        shape = [dim.get_length() if dim.is_static else 3 for dim in port.get_partial_shape()]
        feeds[port.get_any_name()] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def _computed(model: ov.Model, feeds: dict) -> list[np.ndarray]:
    return [np.array(value) for value in compile_f32(model)(feeds).values()]


def _assert_saved_and_put_back(model: ov.Model, tmp_path: Path, feeds: dict | None) -> Path:
    """`ov_loops.save` leaves `model` as it was (and computing what it did, given `feeds`) and
    writes what save_owned writes; the IR's path."""
    before = _state(model, tmp_path / "states")
    computed = _computed(model, feeds) if feeds is not None else None
    ov_loops.api.save(model, tmp_path / "api.xml")
    assert len(SAVED) == 1  # in place
    assert _state(model, tmp_path / "states") == before
    if feeds is not None:
        for got, expected in zip(_computed(model, feeds), computed, strict=True):
            np.testing.assert_array_equal(got, expected)
    compress = not census(model).has_f64
    save_owned(model, tmp_path / "owned.xml", compress)  # changes the model: last
    _assert_same_files(tmp_path / "api.xml", tmp_path / "owned.xml")
    return tmp_path / "api.xml"


def _named_weights_model() -> ov.Model:
    """y = x @ W + b and W itself as an output: f32 Constants whose outputs carry names, one
    read by a Result."""
    x = ops.parameter([1, 8], np.float32, name="x")
    weights = ops.constant(np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32))
    weights.output(0).get_tensor().set_names({"W"})
    bias = ops.constant(np.arange(8, dtype=np.float32))
    bias.output(0).get_tensor().set_names({"b"})
    y = ops.add(ops.matmul(x, weights, False, False), bias)
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([y, weights], [x], "named")


@pytest.mark.parametrize("name", BENCH_NAMES)
def test_save_writes_what_save_model_writes_and_puts_the_model_back(tmp_path, name):
    model = ov_loops.api.translate(BENCH / f"{name}.onnx").model
    ov.save_model(model, str(tmp_path / "cloned.xml"))
    saved = _assert_saved_and_put_back(model, tmp_path, _feeds(model))
    _assert_same_files(tmp_path / "cloned.xml", saved)


def test_a_model_whose_weight_is_an_output_is_put_back(tmp_path):
    """(save_model's clone writes the Result's port FP16 though the Convert makes f32.)"""
    model = _named_weights_model()
    saved = _assert_saved_and_put_back(model, tmp_path, _feeds(model))
    read = ov.Core().read_model(str(saved))
    assert read.outputs[1].get_names() == {"W"}
    assert read.outputs[1].get_element_type() == ov.Type.f32


@pytest.mark.parametrize("name", BENCH_NAMES)
def test_a_model_at_max_is_put_back(tmp_path, name):
    model = ov_loops.api.translate(BENCH / f"{name}.onnx", optimize="max").model
    _assert_saved_and_put_back(model, tmp_path, _feeds(model))


@pytest.mark.parametrize("level", ["default", "max"])
@pytest.mark.parametrize("name", SAMPLE)
def test_exporters_models_are_put_back(tmp_path, name, level):
    model = ov_loops.api.translate(CORPUS / f"{name}.onnx", optimize=level).model
    corpus_model = next(each for each in models() if each.name == name)
    _assert_saved_and_put_back(model, tmp_path, corpus_model.sets()[0][0])


def test_a_model_of_many_loops_is_put_back(tmp_path):
    model = ov_loops.api.translate(sequential_loops(40)).model
    feeds = {"M": np.array(3, np.int64), "x": np.arange(4, dtype=np.float32)}
    _assert_saved_and_put_back(model, tmp_path, feeds)


def test_uncompressed_save_puts_the_model_back(tmp_path):
    model = ov_loops.api.translate(BENCH / "torch_rnn_stack.onnx").model
    before = _state(model, tmp_path / "states")
    ov_loops.api.save(model, tmp_path / "api.xml", compress_to_fp16=False)
    assert len(SAVED) == 1
    assert _state(model, tmp_path / "states") == before
    ov.save_model(model, str(tmp_path / "cloned.xml"), compress_to_fp16=False)
    _assert_same_files(tmp_path / "cloned.xml", tmp_path / "api.xml")


def _failing(monkeypatch, owner, name: str, error: Exception) -> None:
    """Make `owner.name` fail with `error` (after running, for ov.serialize: a half-written
    IR)."""
    real = getattr(owner, name)

    def failing(*args, **kwargs):
        if name == "serialize":
            real(*args, **kwargs)
        raise error

    monkeypatch.setattr(owner, name, failing)


@pytest.mark.parametrize(
    ("owner", "name", "error", "raised"),
    [
        (ov, "serialize", OSError(28, "No space left on device"), InputError),
        (offline, "apply_fused_names_cleanup", RuntimeError("cleanup"), RuntimeError),
    ],
    ids=["serialize", "after-compression"],
)
def test_an_error_while_writing_puts_the_model_back_and_writes_nothing(
    tmp_path, monkeypatch, owner, name, error, raised
):
    model = ov_loops.api.translate(BENCH / "torch_rnn_stack.onnx").model
    before = _state(model, tmp_path / "states")
    _failing(monkeypatch, owner, name, error)
    with pytest.raises(raised):
        ov_loops.api.save(model, tmp_path / "new" / "model.xml")
    assert len(SAVED) == 1
    monkeypatch.undo()
    assert not (tmp_path / "new").exists()
    assert _state(model, tmp_path / "states") == before


def test_a_small_model_is_written_by_save_model_by_default(tmp_path, monkeypatch):
    monkeypatch.undo()  # PUT_BACK_BYTES as shipped
    model = ov_loops.api.translate(BENCH / "torch_rnn_stack.onnx").model
    assert not census(model).in_place_is_cheaper(True, staging.PUT_BACK_BYTES)
    assert census(model).in_place_is_cheaper(True)
    written = []
    monkeypatch.setattr(BorrowedModel, "save", lambda *args: written.append(args))
    ov_loops.api.save(model, tmp_path / "api.xml")
    assert not written
    assert (tmp_path / "api.xml").exists()


def test_rt_info_the_passes_add_or_replace_is_put_back(tmp_path, monkeypatch):
    """OpenVINO 2026.4's passes add keys only to new ops and remove `fused_names`; keys added
    to any op (one that had no rt_info too) and values replaced are put back as well."""
    model = ov_loops.api.translate(BENCH / "torch_rnn_stack.onnx").model
    compress = offline.compress_model_transformation

    def marking(marked: ov.Model) -> None:
        for op in ovgraph.all_ops(marked):
            rt_info = op.get_rt_info()
            for key in list(rt_info.keys()):
                rt_info[key] = "replaced"
            rt_info["added"] = "yes"
        compress(marked)

    before = _state(model, tmp_path / "states")
    monkeypatch.setattr(offline, "compress_model_transformation", marking)
    ov_loops.api.save(model, tmp_path / "api.xml")
    assert len(SAVED) == 1
    assert _state(model, tmp_path / "states") == before
