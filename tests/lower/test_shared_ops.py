"""lower/shared_ops.py: one small Constant per value and one pure op per computation in each
graph holding loops; results, named values and computed copies stay their own."""

from __future__ import annotations

from collections import Counter

import numpy as np
import openvino as ov
import openvino.opset15 as ops

import ov_loops
from benchmarks.generated_models import sequential_loops
from ov_loops import ovgraph
from ov_loops.lower.shared_ops import share_ops
from tests.harness import assert_matches_onnxruntime


def _main_graph_kinds(model: ov.Model) -> Counter:
    return Counter(node.get_type_name() for node in model.get_ordered_ops())


def test_loops_reading_one_trip_count_map_it_once_and_share_their_constants():
    model = ov_loops.convert(sequential_loops(3))
    kinds = _main_graph_kinds(model)
    # the trip count's mapping (M >= 2**31 -> -1, M <= 0 -> 0) and the zero-run flag: once
    assert kinds["Convert"] == kinds["GreaterEqual"] == kinds["LessEqual"] == 1
    assert kinds["Equal"] == 1
    constants = [node for node in model.get_ordered_ops() if node.get_type_name() == "Constant"]
    values, loop_inputs = [], 0
    for node in constants:
        readers = [target.get_node() for target in node.output(0).get_target_inputs()]
        if any(reader.get_type_name() == "Loop" for reader in readers):
            # the CPU plugin crashes on a Constant feeding a Loop and more (test_plugin_crashes)
            assert len(readers) == 1, f"{node.get_friendly_name()} feeds a Loop and more"
            loop_inputs += 1
        else:
            values.append((str(node.get_output_element_type(0)), node.get_data().tobytes()))
    assert len(values) == len(set(values)), "a small constant is held twice"
    assert loop_inputs == 3  # each Loop's initial condition


def test_shared_trip_counts_keep_zero_runs_after_runs_right(tmp_path):
    x = np.arange(4, dtype=np.float32)
    runs = [{"M": np.array(count, np.int64), "x": x} for count in (3, 0, 2, 0, 1)]
    assert_matches_onnxruntime(sequential_loops(3), runs, tmp_path)


def _with_two_readers(make) -> tuple[ov.Model, list[ov.Node]]:
    x = ops.parameter([4], np.float32, name="x")
    first, second = make(x.output(0)), make(x.output(0))
    total = ops.add(first, second)
    return ov.Model([ops.result(total)], [x]), [first, second]


def test_equal_constants_and_pure_ops_are_merged():
    def make(x):
        return ops.select(ops.less(x, ops.constant(np.float32(0))), x, ops.constant(np.float32(2)))

    model, _ = _with_two_readers(make)
    model = _in_a_loop_holder(model)
    assert share_ops(model) == 4  # 0, 2, Less and Select once each
    kinds = _main_graph_kinds(model)
    assert kinds["Less"] == kinds["Select"] == 1


def test_copies_named_values_and_values_results_read_stay_their_own():
    for make in (
        ovgraph.copy,  # Maximum(x, x): a copy the CPU plugin keeps
        ovgraph.passthrough,  # Convert to its own type
        lambda x: _named(ops.convert(x, "f16")),
    ):
        model, _ = _with_two_readers(lambda x, make=make: make(x))
        assert share_ops(_in_a_loop_holder(model)) == 0
    x = ops.parameter([4], np.float32, name="x")
    zero = [ops.constant(np.zeros(4, np.float32)) for _ in range(2)]
    read = ops.constant(np.zeros(4, np.float32))
    model = ov.Model([ops.result(zero[0]), ops.result(zero[1]), ops.result(ops.add(x, read))], [x])
    assert share_ops(_in_a_loop_holder(model)) == 0


def _named(node: ov.Node) -> ov.Node:
    node.output(0).set_names({"kept"})
    return node


def _in_a_loop_holder(model: ov.Model) -> ov.Model:
    """`model` with a trivial If beside its outputs: share_ops walks only graphs that hold a
    body (the post-loop ops live there)."""
    flag = ops.parameter([], np.bool_, name="flag")
    branch = ops.if_op(flag.output(0))
    then_value = ops.parameter([], np.bool_)
    body = ov.Model([ops.result(then_value)], [then_value])
    branch.set_then_body(body)
    branch.set_else_body(body.clone())
    branch.set_input(
        flag.output(0), body.get_parameters()[0], branch.get_else_body().get_parameters()[0]
    )
    result = branch.set_output(body.get_results()[0], branch.get_else_body().get_results()[0])
    model.add_parameters([flag])
    model.add_results([ops.result(result)])
    return model
