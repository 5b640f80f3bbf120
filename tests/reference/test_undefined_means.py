"""ReduceMean in the ONNX reference: onnx.reference's answers where ONNX defines the mean, 0
where it leaves it undefined (a mean over zero elements), without a numpy warning."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnx.helper as h
import pytest
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator

from ov_loops.reference.onnx_reference import run_onnx

FORMS = [
    (opset, keepdims, axes, noop)
    for opset in (13, 18)
    for keepdims in (0, 1)
    for axes in (None, [1], [-1, 0], [])
    for noop in ((0, 1) if opset == 18 else (0,))
]


def _mean_model(opset: int, keepdims: int, axes: list[int] | None, noop: int) -> onnx.ModelProto:
    inputs, attributes, initializers = ["x"], {"keepdims": keepdims}, []
    if opset >= 18:
        attributes["noop_with_empty_axes"] = noop
        if axes is not None:
            inputs.append("axes")
            initializers.append(h.make_tensor("axes", TensorProto.INT64, [len(axes)], axes))
    elif axes:
        attributes["axes"] = axes
    node = h.make_node("ReduceMean", inputs, ["y"], **attributes)
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, None)
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = h.make_graph([node], "mean", [x], [y], initializers)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


@pytest.mark.parametrize("form", FORMS)
def test_a_defined_mean_is_onnx_references(form):
    model = _mean_model(*form)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,) = run_onnx(model, {"x": x})
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shape", [(0, 3), (2, 0, 4)])
def test_a_mean_over_zero_elements_is_zero_without_a_warning(form, shape):
    model = _mean_model(*form)
    x = np.zeros(shape, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (numpy_answer,) = ReferenceEvaluator(model).run(None, {"x": x})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (got,) = run_onnx(model, {"x": x})
    assert got.shape == numpy_answer.shape
    empty = np.isnan(numpy_answer)  # where numpy divides 0 by 0
    assert (got[empty] == 0).all()
    np.testing.assert_array_equal(got[~empty], numpy_answer[~empty])


def test_check_takes_openvinos_mean_over_zero_elements(tmp_path):
    """`check` of the ONNX model and of its IR (the IR reference's ReduceMean) MATCH where numpy
    would give NaN against OpenVINO's 0."""
    import ov_loops

    model = _mean_model(18, 0, None, 0)
    model.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 0
    onnx.save(model, tmp_path / "mean.onnx")
    ov_loops.save(ov_loops.convert(model), tmp_path / "mean.xml")
    for path in (tmp_path / "mean.onnx", tmp_path / "mean.xml"):
        report = ov_loops.check(path)
        assert report.ok, "\n".join(report.lines())
