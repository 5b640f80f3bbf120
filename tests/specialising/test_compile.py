"""`ov_loops.compile` on CPU: the cache (hits, misses, evictions, first-call times), results
equal to the unspecialised IR's on real exports, and the errors of bad inputs."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
from ov_loops.errors import ConversionError, InputError

EXPORTS = Path(__file__).resolve().parents[1] / "models" / "exporters"
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
RTOL, ATOL = 1e-4, 1e-5  # f32


def export(name: str) -> tuple[Path, dict[str, np.ndarray]]:
    path = EXPORTS / f"{name}.onnx"
    return path, dict(np.load(EXPORTS / f"{name}.inputs.npz"))


def feeds_of(batch: int, steps: int) -> dict[str, np.ndarray]:
    values = np.random.default_rng(batch * 100 + steps).normal(size=(batch, steps, 4))
    return {"x": values.astype(np.float32)}


def unspecialised(model: ov.Model, inputs: dict) -> dict[str, np.ndarray]:
    """The outputs of `model` compiled with its dynamic shapes, by output name."""
    results = ov.Core().compile_model(model, "CPU", F32)(inputs)
    return {port.get_any_name(): value for port, value in results.items()}


def assert_same(got, want: dict[str, np.ndarray]) -> None:
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize(
    "name",
    [
        "jax_linen_lstm_carry_in",
        "jax_linen_gru_carry_init",
        "jax_linen_stacked_gru_lstm",
        "jax_linen_nn_scan_gru_time_major",
    ],
)
def test_results_equal_the_unspecialised_irs(name: str) -> None:
    path, inputs = export(name)
    compiled = ov_loops.compile(path, config=F32)
    want = unspecialised(ov_loops.convert(path, optimize="max"), inputs)
    assert_same(compiled(inputs), want)
    assert_same(compiled(inputs), dict(np.load(EXPORTS / f"{name}.expected.npz")))
    (signature,) = compiled.cached()
    assert all(
        all(dim > 0 for dim in shape) for _, shape, _ in signature.inputs
    )  # every dim static


def test_an_ir_is_reshaped_per_signature(tmp_path: Path) -> None:
    path, _ = export("jax_linen_simple_carry_init")
    model = ov_loops.convert(path)
    xml = tmp_path / "model.xml"
    ov_loops.save(model, xml, compress_to_fp16=False)
    for source in (xml, model):
        compiled = ov_loops.compile(source, config=F32)
        for batch, steps in ((1, 7), (3, 2)):
            inputs = feeds_of(batch, steps)
            assert_same(compiled(inputs), unspecialised(model, inputs))
        assert compiled.cache_info().misses == 2
    assert model.input(0).get_partial_shape().is_dynamic  # the given model is left as it was


def test_the_cache_hits_misses_and_evicts_the_least_recently_used(
    caplog: pytest.LogCaptureFixture,
) -> None:
    path, _ = export("jax_linen_simple_carry_init")
    compiled = ov_loops.compile(path, config=F32, cache_size=2, optimize="default")
    first, second, third = feeds_of(1, 3), feeds_of(1, 4), feeds_of(2, 3)
    with caplog.at_level(logging.INFO, logger="ov_loops"):
        compiled(first)
        compiled(second)
        compiled(first)  # a hit: `first` becomes the most recently used
        compiled(third)  # evicts `second`
    signature = compiled.signature
    assert compiled.cached() == [signature(first), signature(third)]
    info = compiled.cache_info()
    assert (info.hits, info.misses, info.evictions, info.size, info.bound) == (1, 3, 1, 2, 2)
    assert set(compiled.first_calls) == {signature(each) for each in (first, second, third)}
    assert all(call.seconds > 0 for call in compiled.first_calls.values())
    said = [record.getMessage() for record in caplog.records]
    assert sum(message.startswith("specialised for x[") for message in said) == 3
    assert f"evicted the model compiled for {signature(second)}" in said
    compiled(second)  # compiled again
    assert compiled.cache_info().misses == 4


def test_values_of_another_type_hit_the_typed_signature() -> None:
    path, _ = export("jax_linen_simple_carry_init")
    compiled = ov_loops.compile(path, config=F32)
    inputs = feeds_of(1, 3)
    want = compiled(inputs)["y"]
    got = compiled({"x": inputs["x"].astype(np.float64)})["y"]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    assert compiled.cache_info().hits == 1


def test_inputs_by_position_and_as_a_list_return_like_compiled_model() -> None:
    path, _ = export("jax_linen_simple_carry_init")
    compiled = ov_loops.compile(path, config=F32)
    x = feeds_of(2, 3)["x"]
    by_name = compiled({"x": x})
    for same in (compiled([x]), compiled({0: x}), compiled(x)):
        np.testing.assert_array_equal(same[0], by_name["y"])
    assert compiled.cache_info().misses == 1


def test_inputs_the_model_refuses_are_one_line_input_errors() -> None:
    path, inputs = export("jax_linen_lstm_carry_in")
    compiled = ov_loops.compile(path, config=F32)
    wrong_batch = {**inputs, "c0": np.zeros((3, 8), np.float32)}
    with pytest.raises(InputError) as raised:
        compiled(wrong_batch)
    assert str(raised.value) == (
        f"inputs {compiled.signature(wrong_batch)}: dim B is 2 in input 'x' and 3 in input "
        "'c0': the model declares them one length"
    )
    with pytest.raises(InputError, match="^no input 'X': the model's inputs are x, c0, h0$"):
        compiled({**inputs, "X": inputs["x"]})
    assert compiled.cache_info().misses == 0


def test_an_ir_refusing_a_shape_is_an_input_error() -> None:
    path, inputs = export("jax_linen_lstm_carry_in")
    compiled = ov_loops.compile(ov_loops.convert(path), config=F32)
    wrong_batch = {**inputs, "c0": np.zeros((3, 8), np.float32)}
    with pytest.raises(InputError) as raised:
        compiled(wrong_batch)
    assert str(raised.value) == (
        f"inputs {compiled.signature(wrong_batch)}: the model refuses these shapes: Argument "
        "shapes are inconsistent."
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"cache_size": 0}, "cache_size must be a positive integer, not 0"),
        ({"optimize": "fast"}, "optimize"),
        ({"config": "f32"}, "config must be a dict of OpenVINO properties, not 'f32'"),
    ],
)
def test_wrong_arguments_are_input_errors(arguments: dict, message: str) -> None:
    path, _ = export("jax_linen_simple_carry_init")
    with pytest.raises(InputError, match=message):
        ov_loops.compile(path, **arguments)


def test_conversion_options_do_not_apply_to_an_ir() -> None:
    model = ov_loops.convert(export("jax_linen_simple_carry_init")[0])
    with pytest.raises(InputError, match="^--optimize, --unroll: conversion options do not"):
        ov_loops.compile(model, optimize="max", unroll=4)


def test_a_model_that_cannot_be_read_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        ov_loops.compile(tmp_path / "missing.onnx")
    with pytest.raises(InputError, match="no such file"):
        ov_loops.compile(tmp_path / "missing.xml")


def test_a_signature_the_converter_refuses_is_not_cached(monkeypatch) -> None:
    path, _ = export("jax_linen_simple_carry_init")
    compiled = ov_loops.compile(path, config=F32)

    def refuse(*_args, **_keywords):
        raise ConversionError("the loop cannot be converted")

    monkeypatch.setattr("ov_loops.api.translate", refuse)
    with pytest.raises(ConversionError, match=r"^inputs x\[1,3,4\]\{f32\}: the loop cannot be"):
        compiled(feeds_of(1, 3))
    assert compiled.cached() == [] and compiled.first_calls == {}


def test_calls_share_one_request_and_return_copies() -> None:
    """Every call of a signature reuses its infer request: the outputs of a call are copies
    the next call does not overwrite; an input of another layout (a transposed view) or
    element type is converted first."""
    x = ops.parameter([-1, 3], ov.Type.f32, name="x")
    model = ov.Model([ops.result(ops.multiply(x, ops.constant(np.float32(2.0))))], [x], "double")
    compiled = ov_loops.compile(model)
    first_input = np.arange(6, dtype=np.float32).reshape(2, 3)
    first = compiled(first_input)[0]
    transposed = np.arange(6, dtype=np.float64).reshape(3, 2).T  # not C-contiguous, f64
    second = compiled({"x": transposed})[0]
    np.testing.assert_array_equal(first, 2 * first_input)
    np.testing.assert_array_equal(second, 2 * transposed)
    assert compiled.cache_info().misses == 1 and compiled.cache_info().hits == 1


def test_a_failed_inference_raises_with_one_inference_thread(tmp_path):
    """The CPU plugin's one-thread infer() swallowed an inference error (a Reshape of 5 values
    to [2, 3]) and returned the output buffers unwritten; start_async + wait raises it."""
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"])],
        "reshape",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [None]),
            helper.make_tensor_value_info("s", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "reshape.onnx")
    compiled = ov_loops.compile(tmp_path / "reshape.onnx", config={"INFERENCE_NUM_THREADS": 1})
    with pytest.raises(RuntimeError):
        compiled({"x": np.ones(5, np.float32), "s": np.array([2, 3])})
