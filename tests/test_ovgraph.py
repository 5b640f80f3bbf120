"""ovgraph: the helpers over OpenVINO graphs (here `twin`, which licm asks of every copied op)."""

from __future__ import annotations

import numpy as np
import openvino.opset15 as ops

from ov_loops.ovgraph import twin


def _readers_of_one_value():
    """A Parameter read by an Add, a Subtract and a Multiply of the same Constant, and a second
    Add of an equal Constant."""
    x = ops.parameter([2], np.float32)
    one = lambda: ops.constant(np.ones(2, np.float32))  # noqa: E731
    add = ops.add(x, one())
    subtract = ops.subtract(x, one())
    multiply = ops.multiply(x, one())
    again = ops.add(x, one())
    return add, subtract, multiply, again


def test_an_op_of_the_same_type_and_sources_is_the_twin():
    add, _, _, again = _readers_of_one_value()
    assert twin(again).get_instance_id() == add.get_instance_id()
    assert twin(add).get_instance_id() == again.get_instance_id()


def test_readers_of_other_types_are_no_twins():
    add, subtract, multiply, again = _readers_of_one_value()
    assert twin(subtract) is None
    assert twin(multiply) is None
    excluded = {again.get_instance_id()}
    assert twin(add, excluded) is None  # the only Add besides itself is excluded


def test_an_op_of_other_attributes_is_no_twin():
    x = ops.parameter([2, 3], np.float32)
    axis = ops.constant(np.int64(1))
    first = ops.reduce_sum(x, axis, keep_dims=False)
    second = ops.reduce_sum(x, ops.constant(np.int64(1)), keep_dims=True)
    assert twin(first) is None
    assert twin(second) is None
