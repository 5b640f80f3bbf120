"""Choosing a lowering (lower/select.py): the cheap test that spares a body cell recognition."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

from ov_loops.lower.select import may_be_cell


def _body(activation: str | None, matmul: bool = True, nested: bool = False) -> ov.Model:
    """h [2, 3] -> (h W) or h + 1, then `activation` (None: none); with `nested`, a Loop beside."""
    h = ops.parameter([2, 3], ov.Type.f32)
    weight = ops.constant(np.ones((3, 3), np.float32))
    one = ops.constant(np.float32(1.0))
    value = ops.matmul(h, weight, False, False) if matmul else ops.add(h, one)
    if activation is not None:
        value = getattr(ops, activation.lower())(value)
    results = [ops.result(value)]
    if nested:
        loop = ops.loop(ops.constant(np.int64(2)), ops.constant(True))
        loop.set_function(ov.Model([ops.result(ops.constant(True))], []))
        loop.set_special_body_ports([-1, 0])
        results.append(ops.result(loop.get_iter_value(loop.get_function().output(0), -1)))
    return ov.Model(results, [h])


@pytest.mark.parametrize("activation", ["Tanh", "Sigmoid", "Relu"])
def test_a_matmul_and_an_activation_may_be_a_cell(activation):
    assert may_be_cell(_body(activation))


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(lambda: _body(None), id="no activation"),
        pytest.param(lambda: _body("Tanh", matmul=False), id="no MatMul"),
        pytest.param(lambda: _body("Exp"), id="another activation"),
        pytest.param(lambda: _body("Tanh", nested=True), id="a nested Loop"),
    ],
)
def test_a_body_without_what_every_cell_has_is_no_cell(body):
    assert not may_be_cell(body())


def test_the_cheap_test_knows_every_activation_cell_recognition_matches():
    """select.py names the activations without importing the cell modules: the two lists must
    stay one (a new activation in cell_patterns.py alone would be skipped silently)."""
    from ov_loops.lower.cell_patterns import RNN_ACTIVATIONS
    from ov_loops.lower.select import CELL_ACTIVATIONS

    assert set(RNN_ACTIVATIONS) == CELL_ACTIVATIONS
