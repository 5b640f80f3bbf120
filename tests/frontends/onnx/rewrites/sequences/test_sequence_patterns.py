"""Sequence patterns OpenVINO's frontend turns into ops no device runs (util:: SequenceMark,
SequenceAt, SequenceLength, ...) or crashes on, and which ov-loops refused before the sequence
lowering: they convert and match onnxruntime, sequence inputs and outputs fed and read as lists."""

from __future__ import annotations

import numpy as np
import onnx

import ov_loops
from ov_loops.frontends.onnx.sequence_io import from_ir_outputs, to_ir_inputs
from tests.harness import compile_f32, onnxruntime_oracle, run, save_and_reload
from tests.onnx_builders import T, graph, loop_body, model, node, typed
from tests.test_conformance import assert_outputs_close

F = np.float32


def _sequence(name: str, shape=None) -> onnx.ValueInfoProto:
    return onnx.helper.make_tensor_sequence_value_info(name, T.FLOAT, shape)


def assert_matches_onnxruntime_with_lists(made: onnx.ModelProto, runs: list[dict], tmp_path):
    """Convert, save, reload, compile (CPU, f32); each run (lists for sequences) as onnxruntime."""
    conversion = ov_loops.translate(made)
    compiled = compile_f32(save_and_reload(conversion.model, tmp_path, conversion)[0])
    oracle = onnxruntime_oracle(made)
    for feeds in runs:
        values = [feeds[value.name] for value in made.graph.input]
        got = from_ir_outputs(made, run(compiled, to_ir_inputs(made, values)))
        assert_outputs_close(str(list(feeds)), oracle(feeds), got, 1e-5, 1e-6)


def test_sequence_ops_outside_loops_and_in_if_branches(tmp_path):
    """SequenceLength and SequenceAt of a sequence input (one in an If branch), a returned
    SequenceConstruct, Optional and OptionalHasElement."""
    then_branch = graph(
        [node("SequenceAt", ["s", "k"], ["picked"])],
        [],
        [typed("picked", T.FLOAT, None)],
        name="then",
    )
    else_branch = graph(
        [node("Identity", ["x"], ["same"])], [], [typed("same", T.FLOAT, None)], name="else"
    )
    main = graph(
        [
            node("SequenceLength", ["s"], ["n"]),
            node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch),
            node("SequenceConstruct", ["x", "x"], ["pair"], name="make_pair"),
            node("Optional", ["x"], ["maybe"]),
            node("OptionalHasElement", ["maybe"], ["has"]),
        ],
        [
            _sequence("s", [None]),
            typed("k", T.INT64, []),
            typed("c", T.BOOL, []),
            typed("x", T.FLOAT, [2]),
        ],  # fmt: skip
        [
            typed("n", T.INT64, []),
            typed("y", T.FLOAT, None),
            _sequence("pair"),
            typed("has", T.BOOL, []),
        ],
    )
    runs = [
        {"s": [np.arange(n, dtype=F) - k for n in (3, 1, 4)], "k": np.array(k, np.int64),
         "c": np.array(k % 2 == 0), "x": np.array([1, 2], F)}
        for k in (0, -1, 1, 2)
    ]  # fmt: skip
    assert_matches_onnxruntime_with_lists(model(main, 18), runs, tmp_path)


def test_sequence_split_outside_a_loop_and_read_in_its_body(tmp_path):
    """SplitToSequence with lengths known only at run time; the body reads the sequence at the
    iteration number (declared [1])."""
    ones = onnx.helper.make_tensor("ones", T.INT64, [1], [1])
    body = graph(
        [
            node("SequenceAt", ["parts", "i"], ["part"]),
            node("Add", ["acc_in", "part"], ["acc_out"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("i", T.INT64, [1]), typed("cond_in", T.BOOL, []), typed("acc_in", T.FLOAT, [1])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [1])],
        name="body",
    )
    main = graph(
        [
            node("Shape", ["data"], ["data_shape"]),
            node("ConstantOfShape", ["data_shape"], ["lengths"], value=ones),
            node("SplitToSequence", ["data", "lengths"], ["parts"], axis=0, name="split"),
            node("Loop", ["M", "", "acc0"], ["acc"], body=body, name="sum_parts"),
        ],
        [typed("data", T.FLOAT, ["N"]), typed("M", T.INT64, []), typed("acc0", T.FLOAT, [1])],
        [typed("acc", T.FLOAT, [1])],
    )
    runs = [
        {"data": np.arange(n, dtype=F), "M": np.array(m, np.int64), "acc0": np.zeros(1, F)}
        for n, m in ((5, 5), (3, 2), (4, 0))
    ]
    assert_matches_onnxruntime_with_lists(model(main, 16), runs, tmp_path)


def _sequence_loop(name: str, initial: str) -> onnx.NodeProto:
    body = graph(
        [
            node("Identity", [f"{name}_c"], [f"{name}_keep"]),
            node("Identity", [f"{name}_in"], [f"{name}_out"]),
        ],
        [typed(f"{name}_i", T.INT64, []), typed(f"{name}_c", T.BOOL, []), _sequence(f"{name}_in")],
        [typed(f"{name}_keep", T.BOOL, []), _sequence(f"{name}_out")],
        name="body",
    )
    return node("Loop", ["M", "", initial], [f"{name}_s"], body=body, name=name)


def test_sequence_loops_in_if_branches_and_nested_bodies(tmp_path):
    """A Sequence-carrying Loop in an If branch, and another one in the body of a Loop in the
    other branch."""
    then_branch = graph(
        [
            node("SequenceConstruct", ["x", "x"], ["s0"]),
            _sequence_loop("seq_loop", "s0"),
            node("SequenceLength", ["seq_loop_s"], ["n_then"]),
        ],
        [],
        [typed("n_then", T.INT64, [])],
        name="then",
    )
    inner_body = loop_body(
        [
            node("SequenceConstruct", ["x"], ["t0"]),
            _sequence_loop("inner_seq_loop", "t0"),
            node("SequenceLength", ["inner_seq_loop_s"], ["count"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [],
        [typed("keep", T.BOOL, []), typed("count", T.INT64, [])],
    )
    else_branch = graph(
        [
            node("Loop", ["M", ""], ["counts"], body=inner_body, name="outer"),
            node("ReduceSum", ["counts"], ["n_else"], keepdims=0),
        ],
        [],
        [typed("n_else", T.INT64, [])],
        name="else",
    )
    main = graph(
        [node("If", ["c"], ["n"], then_branch=then_branch, else_branch=else_branch, name="pick")],
        [typed("M", T.INT64, []), typed("c", T.BOOL, []), typed("x", T.FLOAT, [2])],
        [typed("n", T.INT64, [])],
    )
    runs = [
        {"M": np.array(m, np.int64), "c": np.array(c), "x": np.array([1, 2], F)}
        for m, c in ((3, True), (2, False), (0, False))
    ]
    assert_matches_onnxruntime_with_lists(model(main), runs, tmp_path)
