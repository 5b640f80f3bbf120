"""Nested If / Loop / Scan patterns found by the differential fuzz campaign (tests/fuzz/).

Each test is named for the class of failure it reproduces; the models are the campaign's
findings cut down by hand, run on the CPU in f32 against onnxruntime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import ov_loops
from ov_loops.errors import ConversionError
from ov_loops.ovgraph import all_ops
from tests.harness import assert_matches_onnxruntime, compile_f32, save_and_reload
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

CORPUS = Path(__file__).resolve().parents[1] / "models" / "exporters"


def _outer_loop(body_nodes) -> onnx.ModelProto:
    """A Loop over M with one carried [2] value `acc`, whose body is `body_nodes` (they read
    the captures M and w and produce `acc_out`)."""
    body = loop_body(
        [*body_nodes, node("Identity", ["cond_in"], ["keep"])],
        [typed("acc_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [2])],
    )
    return model(
        graph(
            [node("Loop", ["M", "", "acc0"], ["acc"], body=body)],
            [typed("M", T.INT64, []), typed("acc0", T.FLOAT, [2]), typed("w", T.FLOAT, [2])],
            [typed("acc", T.FLOAT, [2])],
        )
    )


def _feeds(trips: int) -> dict[str, np.ndarray]:
    return {
        "M": np.array(trips, np.int64),
        "acc0": np.array([1.0, -2.0], np.float32),
        "w": np.array([0.5, 3.0], np.float32),
    }


def test_capture_read_only_by_a_folded_inner_loop_keeps_invariant_inputs_aligned(tmp_path):
    """The outer body captures M (read only as the trip count of an inner Loop that never runs:
    its initial condition is false, so the converter folds it) and w. The converted body has no
    Parameter for M; the Loop-5's invariant inputs were still fed [M, w], so the body Parameter
    for w received M (validate: BE004 I64 vs FP32; OpenVINO: a boolean Multiply, or wrong
    shapes and values)."""
    inner = loop_body(
        [node("Cast", ["j"], ["fj"], to=T.FLOAT)],
        [],
        [typed("never", T.BOOL, []), typed("fj", T.FLOAT, [])],
        iteration="j",
        condition="never",
    )
    body_nodes = [
        node("Constant", [], ["false"], value=const("false_value", False, np.bool_)),
        node("Loop", ["M", "false"], ["unused"], body=inner),
        node("Add", ["acc_in", "w"], ["acc_out"]),
    ]
    made = _outer_loop(body_nodes)
    assert_matches_onnxruntime(made, [_feeds(3), _feeds(0)], tmp_path)


def test_concat_of_captures_updated_in_place_is_recomputed_every_iteration(tmp_path):
    """`acc_out = Concat(w, x) + ReduceSum(acc_in)` with w and x captured: the CPU plugin builds
    the Concat of invariant inputs in place once, the Add then sums into it, and the next
    iteration read the stale sum (silently wrong from the second iteration). The converter now
    gives such captures a computed copy in the body."""
    body_nodes = [
        node("Concat", ["w", "x"], ["both"], axis=0),
        node("ReduceSum", ["acc_in"], ["total"], keepdims=0),
        node("Add", ["both", "total"], ["acc_out"]),
    ]
    body = loop_body(
        [*body_nodes, node("Identity", ["cond_in"], ["keep"])],
        [typed("acc_in", T.FLOAT, [4])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [4])],
    )
    made = model(
        graph(
            [node("Loop", ["M", "", "acc0"], ["acc"], body=body)],
            [
                typed("M", T.INT64, []),
                typed("acc0", T.FLOAT, [4]),
                typed("w", T.FLOAT, [2]),
                typed("x", T.FLOAT, [2]),
            ],
            [typed("acc", T.FLOAT, [4])],
        )
    )
    runs = [
        {**_feeds(trips), "acc0": np.ones(4, np.float32), "x": np.array([1.0, 2.0], np.float32)}
        for trips in (3, 0, 2)
    ]
    assert_matches_onnxruntime(made, runs, tmp_path)


def _reshaped_statically(trip_count: str = "M") -> onnx.ModelProto:
    """A carried value entering as [2] that the body reads (ReduceSum) and returns as a static
    [4]."""
    body = loop_body(
        [
            node("ReduceSum", ["acc_in"], ["total"], keepdims=0),
            node("Concat", ["w", "w"], ["both"], axis=0),
            node("Add", ["both", "total"], ["acc_out"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("acc_in", T.FLOAT, [None])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [4])],
    )
    inputs = [typed("acc0", T.FLOAT, [2]), typed("w", T.FLOAT, [2])]
    constants = [const("three", 3, np.int64)] if trip_count == "three" else []
    if trip_count == "M":
        inputs.insert(0, typed("M", T.INT64, []))
    return model(
        graph(
            [node("Loop", [trip_count, "", "acc0"], ["acc"], body=body)],
            inputs,
            [typed("acc", T.FLOAT, [None])],
            constants,
        )
    )


def _ifs(conversion: ov_loops.Conversion) -> int:
    return sum(op.get_type_name() == "If" for op in all_ops(conversion.model))


@pytest.mark.parametrize("level", ["none", "default", "max"])
def test_carried_value_reshaped_statically_runs_zero_times_in_an_if(level, tmp_path):
    """The carried value enters as [2] and the body returns a static [4], in a Loop whose trip
    count is a runtime input: on a zero-iteration run the CPU plugin failed ("Can not clone with
    new dims. Descriptor's shape: {4} is incompatible with provided dimensions: {2}"), with
    OpenVINO's own frontend too; refused before (issue 22 item 6). The Loop now sits in an
    If's then branch, the else branch returns the initial value; zero runs after some."""
    runs = [_feeds(trips) for trips in (3, 0, 1, 0, 2)]
    made = _reshaped_statically()
    conversion = assert_matches_onnxruntime(made, runs, tmp_path, optimize=level)
    assert _ifs(conversion) == 1


def _reshaped_in_an_outer_loop() -> onnx.ModelProto:
    """The loop of `_reshaped_statically` (K times, from w) in the body of a Loop over N that
    adds the sum of its result to x."""
    inner = _reshaped_statically().graph.node[0].attribute[0].g
    outer = loop_body(
        [node("Loop", ["K", "", "w"], ["inner_acc"], body=inner),
         node("ReduceSum", ["inner_acc"], ["s"], keepdims=1),
         node("Add", ["x_in", "s"], ["x_out"]),
         node("Identity", ["cond_in"], ["keep"])],
        [typed("x_in", T.FLOAT, [1])],
        [typed("keep", T.BOOL, []), typed("x_out", T.FLOAT, [1])],
        iteration="j",
    )  # fmt: skip
    inputs = [typed("N", T.INT64, []), typed("K", T.INT64, []), typed("x0", T.FLOAT, [1])]
    inputs.append(typed("w", T.FLOAT, [2]))
    main = graph(
        [node("Loop", ["N", "", "x0"], ["x"], body=outer)], inputs, [typed("x", T.FLOAT, [1])]
    )
    return model(main)


@pytest.mark.parametrize("level", ["none", "default", "max"])
def test_a_reshaping_loop_in_a_loop_body_runs_zero_times_in_an_if(level, tmp_path):
    """The If around the inner Loop sits in the outer Loop's body; each count may be 0."""
    runs = [
        {"N": np.array(n, np.int64), "K": np.array(k, np.int64),
         "x0": np.array([0.5], np.float32), "w": np.array([1.0, -2.0], np.float32)}
        for n, k in [(2, 3), (3, 0), (0, 2), (2, 1), (1, 0)]
    ]  # fmt: skip
    made = _reshaped_in_an_outer_loop()
    conversion = assert_matches_onnxruntime(made, runs, tmp_path, optimize=level)
    assert _ifs(conversion) == 1


def test_carried_value_reshaped_statically_runs_when_the_trip_count_is_constant(tmp_path):
    """The same body with a constant trip count (at least one iteration) converts and runs, no
    If."""
    feeds = {k: v for k, v in _feeds(0).items() if k in ("acc0", "w")}
    conversion = assert_matches_onnxruntime(_reshaped_statically("three"), [feeds], tmp_path)
    assert _ifs(conversion) == 0


def _grown_by_two(initial: list) -> onnx.ModelProto:
    """c = Concat(c, [1, 1]) M times (M a runtime input), c entering with shape `initial`."""
    body = loop_body(
        [node("Concat", ["c_in", "two"], ["c_out"], axis=0), node("Identity", ["cond_in"], ["go"])],
        [typed("c_in", T.FLOAT, [None])],
        [typed("go", T.BOOL, []), typed("c_out", T.FLOAT, [None])],
        initializers=[const("two", [1.0, 1.0])],
    )
    return model(
        graph(
            [node("Loop", ["M", "", "c0"], ["c"], body=body)],
            [typed("M", T.INT64, []), typed("c0", T.FLOAT, initial)],
            [typed("c", T.FLOAT, [None])],
        )
    )


def _grown_runs(rows: int) -> list[dict[str, np.ndarray]]:
    start = np.arange(rows, dtype=np.float32) + 5
    return [{"M": np.array(m, np.int64), "c0": start} for m in (3, 0, 1, 0)]


def test_carried_value_entering_shorter_than_what_the_body_appends_runs_at_none(tmp_path):
    """c enters as [1] and grows by two rows: the body returns [2..], and on a zero-iteration
    run the CPU plugin failed ("Can not clone with new dims. Descriptor's shape: {2 - ?} is
    incompatible with provided dimensions: {1}", issue 20); refused before. Its zero runs are
    an If's else branch now."""
    made = _grown_by_two([1])
    conversion = assert_matches_onnxruntime(made, _grown_runs(1), tmp_path, optimize="none")
    assert _ifs(conversion) == 1


def test_a_stateful_carried_value_entering_shorter_runs_zero_times(tmp_path):
    """The same with --stateful: its state, read from a Variable, enters as [?] ([1] on the
    first call); a call of zero iterations leaves it as it was."""
    conversion = ov_loops.translate(_grown_by_two([1]), optimize="none", stateful=True)
    reloaded, _ = save_and_reload(conversion.model, tmp_path, conversion)
    request = compile_f32(reloaded).create_infer_request()
    c0 = np.array([5.0], np.float32)
    expected = c0
    for trips in (0, 2, 0, 1):
        request.infer({"M": np.array(trips, np.int64), "c0": c0})
        expected = np.concatenate([expected, np.ones(2 * trips, np.float32)])
        np.testing.assert_array_equal(request.get_output_tensor(0).data, expected)


@pytest.mark.parametrize("level", ["default", "max"])
def test_carried_value_entering_shorter_than_its_parts_runs_when_stacked(level, tmp_path):
    """Stacked (no longer carried), the same loop runs zero times too."""
    assert_matches_onnxruntime(_grown_by_two([1]), _grown_runs(1), tmp_path, optimize=level)


@pytest.mark.parametrize("rows", [0, 2, 3])
def test_carried_value_entering_empty_or_with_a_part_runs_at_none(rows, tmp_path):
    """Entering empty or with at least a part's rows, it runs zero times on the CPU: no
    refusal."""
    made = _grown_by_two([rows])
    assert_matches_onnxruntime(made, _grown_runs(rows), tmp_path, optimize="none")


@pytest.mark.parametrize("level", ["default", "max"])
def test_carried_value_entering_static_within_the_returned_bounds_runs_zero_times(level, tmp_path):
    """A TorchScript beam search (the exporter corpus): beams enter as [3, 1] and the
    simplified body returns [3, 1..] (its Parameter is [?, ?]). Refused at `default` and
    `max` before (a static dim the Parameter leaves open); the entering shape is within the
    returned bounds, and it runs, zero steps after some steps included."""
    made = onnx.load(CORPUS / "torch_ts_beam_search_topk.onnx")
    runs = [
        {"start": np.array(start, np.int64), "steps": np.array(steps, np.int64)}
        for start, steps in ((2, 4), (5, 0), (1, 2), (3, 0))
    ]
    assert_matches_onnxruntime(made, runs, tmp_path, optimize=level)


@pytest.mark.parametrize("level", ["none", "default"])
def test_carried_if_output_of_differing_branch_shapes_runs_zero_times(level, tmp_path):
    """The carried value enters as [1]; the body returns an If's output whose branches return [2]
    and [4] (OpenVINO types it [2..4]); the Loop's condition is a runtime input. After a
    zero-iteration run the CPU plugin failed in the guard after the Loop ("Can not clone with
    new dims. Descriptor's shape: {3 - 5} is incompatible with provided dimensions: {1}");
    refused before, an If around the Loop now."""
    branches = {
        "then_branch": graph(
            [node("Concat", ["w", "w"], ["long"], axis=0)], [], [typed("long", T.FLOAT, [4])]
        ),
        "else_branch": graph([node("Neg", ["w"], ["short"])], [], [typed("short", T.FLOAT, [2])]),
    }
    body = loop_body(
        [node("If", ["flag"], ["acc_out"], **branches), node("Identity", ["cond_in"], ["keep"])],
        [typed("acc_in", T.FLOAT, [None])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [None])],
    )
    made = model(
        graph(
            [node("Loop", ["M", "go", "acc0"], ["acc"], body=body)],
            [
                typed("M", T.INT64, []),
                typed("go", T.BOOL, []),
                typed("flag", T.BOOL, []),
                typed("acc0", T.FLOAT, [1]),
                typed("w", T.FLOAT, [2]),
            ],
            [typed("acc", T.FLOAT, [None])],
        )
    )
    rng = np.random.default_rng(1)
    runs = [
        {
            "M": np.array(trips, np.int64),
            "go": np.array(go),
            "flag": np.array(flag),
            "acc0": rng.standard_normal(1).astype(np.float32),
            "w": rng.standard_normal(2).astype(np.float32),
        }
        for trips, go, flag in [
            (2, True, True),
            (0, True, False),
            (3, True, False),
            (2, False, True),
        ]
    ]
    conversion = assert_matches_onnxruntime(made, runs, tmp_path, optimize=level)
    assert _ifs(conversion) == 2  # the body's If and the one around the Loop


def test_concat_of_a_loop_output_is_right_after_input_shapes_change(tmp_path):
    """Fuzz seed 22684: `Concat(v, v)` of a Loop's last value read zeros for its first half on
    the second run, after the shape of an input the body reads changed."""
    body = loop_body(
        [
            node("ReduceSum", ["X"], ["total"], keepdims=0),
            node("Identity", ["a"], ["c_out"]),
            node("Identity", ["b"], ["b_scan"]),
            node("Identity", ["flag"], ["keep"]),
        ],
        [typed("c_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("c_out", T.FLOAT, [2]), typed("b_scan", T.FLOAT, [2])],
    )
    main = graph(
        [
            node("Loop", ["M", "start", "b"], ["last", "all"], body=body),
            node("Concat", ["last", "last"], ["twice"], axis=0),
        ],
        [
            typed("a", T.FLOAT, [2]),
            typed("b", T.FLOAT, [2]),
            typed("X", T.FLOAT, [None, 2]),
            typed("flag", T.BOOL, []),
        ],
        [
            typed("last", T.FLOAT, [2]),
            typed("all", T.FLOAT, [None, 2]),
            typed("twice", T.FLOAT, [4]),
        ],
        [const("M", 1, np.int64), const("start", True, np.bool_)],
    )
    rng = np.random.default_rng(0)
    runs = [
        {
            "a": rng.standard_normal(2).astype(np.float32),
            "b": rng.standard_normal(2).astype(np.float32),
            "X": rng.standard_normal((rows, 2)).astype(np.float32),
            "flag": np.array(rows == 2),
        }
        for rows in (2, 1, 3)
    ]
    assert_matches_onnxruntime(model(main), runs, tmp_path)


def _nested_runtime_count_loops() -> onnx.ModelProto:
    """Outer Loop (N times) around an inner Loop (K times) carrying h = tanh(h W); no body
    declares h's shape (as TorchScript exports); both counts are inputs, so each may be 0."""
    inner = loop_body(
        [node("MatMul", ["h_inner", "W"], ["hw"]), node("Tanh", ["hw"], ["h_inner_out"]),
         node("Identity", ["cond_in"], ["cond_out"])],
        [typed("h_inner")],
        [typed("cond_out", T.BOOL, []), typed("h_inner_out")],
    )  # fmt: skip
    outer = loop_body(
        [node("Loop", ["K", "", "h_outer"], ["h_after"], body=inner),
         node("Add", ["h_after", "one"], ["h_outer_out"]),
         node("Identity", ["cond_in"], ["cond_out"])],
        [typed("h_outer")],
        [typed("cond_out", T.BOOL, []), typed("h_outer_out")],
        iteration="j",
    )  # fmt: skip
    main = graph(
        [node("Loop", ["N", "", "h0"], ["h_last"], body=outer)],
        [typed("N", T.INT64, []), typed("K", T.INT64, []), typed("h0", T.FLOAT, ["B", 8])],
        [typed("h_last", T.FLOAT, ["B", 8])],
        [const("W", np.random.default_rng(3).normal(size=(8, 8)) / 4), const("one", 0.5)],
    )
    return model(main)


@pytest.mark.parametrize("optimize", ["none", "max"])
def test_nested_loops_with_runtime_counts_run_zero_times_each(optimize, tmp_path):
    """The inner loop's zero-iteration guard keeps h's static dims ([?,8], not [?,?]), so the
    outer loop's carried h stays [?,8] and the inner loop is not refused for entering less
    static than it leaves."""
    rng = np.random.default_rng(0)
    runs = [
        {"N": np.array(n, np.int64), "K": np.array(k, np.int64),
         "h0": rng.normal(size=(rows, 8)).astype(np.float32)}
        for n, k, rows in [(3, 2, 2), (2, 0, 3), (0, 3, 1), (4, 1, 2)]
    ]  # fmt: skip
    assert_matches_onnxruntime(_nested_runtime_count_loops(), runs, tmp_path, optimize=optimize)


def test_if_whose_branches_return_different_ranks_is_refused():
    """skl2onnx's KNNImputer (after inlining): an If returning [2] from one branch and [1, 2]
    from the other, read by a ReduceSum to a scalar. onnxruntime runs it; OpenVINO's If has an
    output of dynamic rank, which the CPU plugin refused at compile ("CPU plug-in doesn't
    support If operation with dynamic rank"): refused at convert time, in one line naming the
    If and its output. (In a Loop body the Loop's port of dynamic rank is refused first.)"""
    branches = {
        "then_branch": graph([node("Neg", ["w"], ["flat"])], [], [typed("flat", T.FLOAT, [2])]),
        "else_branch": graph(
            [node("Unsqueeze", ["w", "zero"], ["row"])], [], [typed("row", T.FLOAT, [1, 2])]
        ),
    }
    nodes = [
        node("If", ["flag"], ["picked"], name="choose", **branches),
        node("ReduceSum", ["picked"], ["total"], keepdims=0),
    ]
    initializers = [const("zero", [0], np.int64)]
    inputs = [typed("flag", T.BOOL, []), typed("w", T.FLOAT, [2])]
    made = model(graph(nodes, inputs, [typed("total", T.FLOAT, None)], initializers))
    with pytest.raises(ConversionError) as raised:
        ov_loops.translate(made)
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith("If 'choose': output 0 ('picked') has a dynamic rank")
