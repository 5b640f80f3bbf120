"""ovgraph: the helpers over OpenVINO graphs (here `twin`, which licm asks of every copied op, and
`all_ops`, the walk of a model and its bodies)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.ovgraph import (
    Computations,
    all_ops,
    computation_key,
    if_outputs,
    sources_key,
    twin,
)


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


def _recursive_all_ops(model):
    """all_ops as nested generators walk it: the order all_ops keeps."""
    for op in model.get_ordered_ops():
        yield op
        if op.get_type_name() in ("Loop", "TensorIterator"):
            yield from _recursive_all_ops(op.get_function())
        elif op.get_type_name() == "If":
            yield from _recursive_all_ops(op.get_then_body())
            yield from _recursive_all_ops(op.get_else_body())


def _looped(body: ov.Model | None, x: ov.Output) -> ov.Output:
    """|Loop(x)| of two iterations whose body is `body` (results: condition, value; None: one
    returning its input)."""
    if body is None:
        inner = ops.parameter([2], np.float32)
        body = ov.Model([ops.result(ops.constant(True)), ops.result(inner)], [inner])
    loop = ops.loop(ops.constant(np.int64(2)), ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_invariant_input(body.get_parameters()[0], x)
    return ops.abs(loop.get_iter_value(body.get_results()[1].output(0), -1)).output(0)


def _nest(depth: int) -> ov.Model:
    """Loops nested `depth` deep (the innermost body returning its input), then an If whose
    branches hold one Loop each."""
    body = None
    for _ in range(depth - 1):
        x = ops.parameter([2], np.float32)
        body = ov.Model(
            [ops.result(ops.constant(True)), ops.result(_looped(body, x.output(0)))], [x]
        )
    x = ops.parameter([2], np.float32)
    nested = _looped(body, x.output(0))
    branches = []
    for _ in range(2):
        y = ops.parameter([2], np.float32)
        branches.append((ov.Model([ops.result(_looped(None, y.output(0)))], [y]), [nested]))
    condition = ops.parameter([], np.bool_)
    (chosen,) = if_outputs(condition.output(0), *branches)
    return ov.Model([ops.result(chosen)], [x, condition])


def test_all_ops_walks_each_op_before_its_bodies_in_order():
    model = _nest(4)
    walked = [op.get_instance_id() for op in all_ops(model)]
    assert walked == [op.get_instance_id() for op in _recursive_all_ops(model)]
    kinds = [op.get_type_name() for op in all_ops(model)]
    assert kinds.count("Loop") == 4 + 2 and kinds.count("If") == 1


def test_computations_find_an_op_of_equal_sources_and_constants():
    add, subtract, multiply, again = _readers_of_one_value()
    seen = Computations()
    assert [seen.add(op) for op in (add, subtract, multiply)] == [False, False, False]
    assert seen.add(again)  # an Add of the same Parameter and an equal Constant
    assert computation_key(again) == computation_key(add)
    assert sources_key(again) == sources_key(add)


def test_computations_tell_other_constants_and_attributes_apart():
    x = ops.parameter([2, 3], np.float32)
    seen = Computations()
    assert not seen.add(ops.add(x, ops.constant(np.ones([2, 3], np.float32))))
    assert not seen.add(ops.add(x, ops.constant(np.zeros([2, 3], np.float32))))
    axis = ops.constant(np.int64(1))
    assert not seen.add(ops.reduce_sum(x, axis, keep_dims=False))
    assert not seen.add(ops.reduce_sum(x, axis, keep_dims=True))
    assert seen.add(ops.reduce_sum(x, ops.constant(np.int64(1)), keep_dims=True))
