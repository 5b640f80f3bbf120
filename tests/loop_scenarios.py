"""ONNX Loop scenario models, each named for what it exercises.

Every builder returns (model, feeds): feeds run in order on one compiled model, with a
zero-iteration run placed after runs with iterations.
Each public function is a scenario, registered in SCENARIOS by `@scenario` under its name;
helpers are private.
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.onnx_builders import T, const, graph, loop_body, model, node, typed, untyped
from tests.registry import Registry

I64_MAX = 2**63 - 1
SCENARIOS: Registry = Registry("Loop scenario")
scenario = SCENARIOS.register


def _accumulate(trip: str, condition: str):
    """y += x each iteration (x captured from main), stop when sum(y) >= limit; scan out y."""
    body = loop_body(
        [
            node("Add", ["y_in", "x"], ["y_out"]),
            node("ReduceSum", ["y_out"], ["total"], keepdims=0),
            node("Less", ["total", "limit"], ["keep_going"]),
            node("Identity", ["y_out"], ["y_scan"]),
        ],
        [typed("y_in", T.FLOAT, [2])],
        [
            typed("keep_going", T.BOOL, []),
            typed("y_out", T.FLOAT, [2]),
            typed("y_scan", T.FLOAT, [2]),
        ],
    )
    inputs = [typed("x", T.FLOAT, [2]), typed("y0", T.FLOAT, [2]), typed("limit", T.FLOAT, [])]
    if trip:
        inputs.append(typed("M", T.INT64, []))
    if condition:
        inputs.append(typed("c0", T.BOOL, []))
    main = graph(
        [node("Loop", [trip, condition, "y0"], ["y_final", "y_all"], body=body)],
        inputs,
        [typed("y_final", T.FLOAT, [2]), typed("y_all", T.FLOAT, [None, 2])],
    )
    runs = []
    for m, c, limit in [
        (3, True, 1e9),
        (6, True, 10.0),
        (0, True, 1e9),
        (4, False, 1e9),
        (2, True, 1e9),
        (50, True, 25.0),
    ]:
        feeds = {
            "x": np.array([1.0, 2.0], np.float32),
            "y0": np.array([0.5, -0.5], np.float32),
            "limit": np.array(limit, np.float32),
        }
        if trip:
            feeds["M"] = np.array(m, np.int64)
        if condition:
            feeds["c0"] = np.array(c)
        if not trip and not condition or (not trip and c):
            feeds["limit"] = np.array(min(limit, 40.0), np.float32)  # keep unbounded loops finite
        runs.append(feeds)
    return model(main), runs


@scenario
def loop_trip_count_and_condition():
    return _accumulate("M", "c0")


@scenario
def loop_trip_count_and_condition_of_shape_1():
    """Some producers give M and cond as shape-[1] tensors rather than scalars."""
    body = graph(
        [
            node("Add", ["y_in", "y_in"], ["y_out"]),
            node("ReduceSum", ["y_out"], ["total"], keepdims=0),
            node("Less", ["total", "limit"], ["keep"]),
        ],
        [typed("i", T.INT64, []), typed("cond_in", T.BOOL, None), typed("y_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("y_out", T.FLOAT, [2]), typed("y_out", T.FLOAT, [2])],
        name="body",
    )
    main = graph(
        [node("Loop", ["M", "c0", "y0"], ["y", "ys"], body=body)],
        [
            typed("M", T.INT64, [1]),
            typed("c0", T.BOOL, [1]),
            typed("y0", T.FLOAT, [2]),
            typed("limit", T.FLOAT, []),
        ],
        [typed("y", T.FLOAT, [2]), typed("ys", T.FLOAT, [None, 2])],
    )
    runs = [
        {
            "M": np.array([m], np.int64),
            "c0": np.array([c]),
            "y0": np.array([1.0, 2.0], np.float32),
            "limit": np.array(lim, np.float32),
        }
        for m, c, lim in [(5, True, 1e9), (9, True, 50.0), (0, True, 1e9), (3, False, 1e9)]
    ]
    return model(main), runs


@scenario
def loop_trip_count_only_body_condition_honoured():
    return _accumulate("M", "")


@scenario
def loop_no_trip_count_while():
    return _accumulate("", "c0")


@scenario
def loop_no_trip_count_no_condition():
    return _accumulate("", "")


@scenario
def loop_iteration_number_and_condition_as_data():
    """current_iteration feeds arithmetic; the incoming condition is used as data (Cast)."""
    body = loop_body(
        [
            node("Cast", ["i"], ["fi"], to=T.FLOAT),
            node("Cast", ["cond_in"], ["fc"], to=T.FLOAT),
            node("Mul", ["fi", "fc"], ["step"]),
            node("Add", ["acc_in", "step"], ["acc_out"]),
            node("Less", ["fi", "stop_at"], ["keep_going"]),
            node("Identity", ["i"], ["i_scan"]),
        ],
        [typed("acc_in", T.FLOAT, [])],
        [
            typed("keep_going", T.BOOL, []),
            typed("acc_out", T.FLOAT, []),
            typed("i_scan", T.INT64, []),
        ],
    )
    main = graph(
        [node("Loop", ["M", "c0", "acc0"], ["acc", "iters"], body=body)],
        [
            typed("M", T.INT64, []),
            typed("c0", T.BOOL, []),
            typed("acc0", T.FLOAT, []),
            typed("stop_at", T.FLOAT, []),
        ],
        [typed("acc", T.FLOAT, []), typed("iters", T.INT64, [None])],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "c0": np.array(c),
            "acc0": np.array(1.5, np.float32),
            "stop_at": np.array(s, np.float32),
        }
        for m, c, s in [(5, True, 100), (10, True, 3), (0, True, 100), (4, False, 100)]
    ]
    return model(main), runs


@scenario
def loop_iteration_number_and_condition_declared_shape_1():
    """An old form: the body declares the iteration number and condition with shape [1], so
    both are fed as [1] (as onnxruntime does) and the scan outputs stack to (T, 1)."""
    body = graph(
        [
            node("Cast", ["i"], ["fi"], to=T.FLOAT),
            node("Add", ["acc_in", "fi"], ["acc_out"]),
            node("Less", ["fi", "stop_at"], ["below"]),
            node("And", ["below", "cond_in"], ["keep"]),
            node("Identity", ["i"], ["i_scan"]),
            node("Identity", ["cond_in"], ["cond_scan"]),
        ],
        [typed("i", T.INT64, [1]), typed("cond_in", T.BOOL, [1]), typed("acc_in", T.FLOAT, [1])],
        [
            typed("keep", T.BOOL, [1]),
            typed("acc_out", T.FLOAT, [1]),
            typed("i_scan", T.INT64, [1]),
            typed("cond_scan", T.BOOL, [1]),
        ],
        name="body",
    )
    main = graph(
        [node("Loop", ["M", "c0", "acc0"], ["acc", "iterations", "conditions"], body=body)],
        [
            typed("M", T.INT64, []),
            typed("c0", T.BOOL, [1]),
            typed("acc0", T.FLOAT, [1]),
            typed("stop_at", T.FLOAT, []),
        ],
        [
            typed("acc", T.FLOAT, [1]),
            typed("iterations", T.INT64, [None, 1]),
            typed("conditions", T.BOOL, [None, 1]),
        ],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "c0": np.array([c]),
            "acc0": np.array([1.5], np.float32),
            "stop_at": np.array(stop, np.float32),
        }
        for m, c, stop in [(4, True, 100), (6, True, 2), (0, True, 9), (3, False, 9)]
    ]
    return model(main), runs


@scenario
def loop_untyped_condition_input_fed_like_the_loop_condition_of_shape_1():
    """The body declares no type for its condition input, the Loop's condition is [1]: the body
    receives a [1] condition, as onnxruntime passes it on (found by fuzzing)."""
    built, runs = loop_iteration_number_and_condition_declared_shape_1()
    body = next(a.g for a in built.graph.node[0].attribute if a.name == "body")
    body.input[1].ClearField("type")
    return built, runs


@scenario
def loop_iteration_number_declared_with_rank_2_fed_as_shape_1():
    """The body declares its iteration number [?, 3] (any rank but 0): onnxruntime feeds [1]
    (found by fuzzing)."""
    built, runs = loop_iteration_number_and_condition_declared_shape_1()
    body = next(a.g for a in built.graph.node[0].attribute if a.name == "body")
    body.input[0].CopyFrom(typed("i", T.INT64, [None, 3]))
    return built, runs


@scenario
def loop_carried_shape_grows():
    """A loop-carried vector grows by one element per iteration; a matrix doubles its rows."""
    body = loop_body(
        [
            node("Cast", ["i"], ["fi"], to=T.FLOAT),
            node("Unsqueeze", ["fi", "axis0"], ["fi1"]),
            node("Concat", ["v_in", "fi1"], ["v_out"], axis=0),
            node("Concat", ["m_in", "m_in"], ["m_out"], axis=0),
            node("Identity", ["cond_in"], ["keep_going"]),
        ],
        [typed("v_in", T.FLOAT, [None]), typed("m_in", T.FLOAT, [None, 2])],
        [
            typed("keep_going", T.BOOL, []),
            typed("v_out", T.FLOAT, [None]),
            typed("m_out", T.FLOAT, [None, 2]),
        ],
        initializers=[const("axis0", [0], np.int64)],
    )
    main = graph(
        [node("Loop", ["M", "", "v0", "m0"], ["v", "m"], body=body)],
        [typed("M", T.INT64, []), typed("v0", T.FLOAT, [2]), typed("m0", T.FLOAT, [1, 2])],
        [typed("v", T.FLOAT, [None]), typed("m", T.FLOAT, [None, 2])],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "v0": np.array([7.0, 8.0], np.float32),
            "m0": np.array([[1.0, 2.0]], np.float32),
        }
        for m in (3, 0, 5)
    ]
    return model(main), runs


@scenario
def loop_appended_carried_values_may_run_zero_times():
    """Two carried values only grown by Concat (a vector on axis 0, a matrix on axis 1: at
    `default` they become stacked outputs), a runtime trip count and condition, and a body
    condition stopping after iteration k. Runs of zero iterations (M 0, c0 false) after runs
    with some: at `max` (stacked, then unrolled with masked copies) each came back as its
    initial value twice ([1,2] -> [1,2,1,2]), issue 20."""
    body = loop_body(
        [
            node("Cast", ["i"], ["fi"], to=T.FLOAT),
            node("Reshape", ["fi", "one"], ["v_part"]),
            node("Expand", ["fi", "column"], ["m_part"]),
            node("Concat", ["v_in", "v_part"], ["v_out"], axis=0),
            node("Concat", ["m_in", "m_part"], ["m_out"], axis=1),
            node("Add", ["s_in", "fi"], ["s_out"]),
            node("Less", ["i", "k"], ["keep_going"]),
        ],
        [
            typed("v_in", T.FLOAT, [None]),
            typed("m_in", T.FLOAT, [2, None]),
            typed("s_in", T.FLOAT, []),
        ],
        [
            typed("keep_going", T.BOOL, []),
            typed("v_out", T.FLOAT, [None]),
            typed("m_out", T.FLOAT, [2, None]),
            typed("s_out", T.FLOAT, []),
        ],
        initializers=[const("one", [1], np.int64), const("column", [2, 1], np.int64)],
    )
    main = graph(
        [node("Loop", ["M", "c0", "v0", "m0", "s0"], ["v", "m", "s"], body=body)],
        [
            typed("M", T.INT64, []),
            typed("c0", T.BOOL, []),
            typed("k", T.INT64, []),
            typed("v0", T.FLOAT, [2]),
            typed("m0", T.FLOAT, [2, 3]),
            typed("s0", T.FLOAT, []),
        ],
        [typed("v", T.FLOAT, [None]), typed("m", T.FLOAT, [2, None]), typed("s", T.FLOAT, [])],
    )
    # (M, c0, k): zero-iteration runs first, after runs with iterations, and last
    controls = [(0, 1, 9), (3, 1, 9), (0, 1, 9), (2, 0, 9), (20, 1, 17), (5, 1, 2), (1, 1, 9)]
    runs = [
        {
            "M": np.array(m, np.int64),
            "c0": np.array(bool(c)),
            "k": np.array(k, np.int64),
            "v0": np.array([1.0, 2.0], np.float32),
            "m0": np.arange(6, dtype=np.float32).reshape(2, 3),
            "s0": np.array(0.5, np.float32),
        }
        for m, c, k in [*controls, (0, 1, 9)]
    ]
    return model(main), runs


@scenario
def loop_carried_values_grown_by_parts_of_several_rows():
    """Carried values grown by Concat with parts of several rows: two rows on axis 0 (the
    part a Concat of two, which the frontend joins into the appending Concat), three columns
    on axis 1. At `default` they become stacked outputs; OpenVINO refused them ("Invalid
    start, stride, part_size, or end attribute values in Loop op": Loop-5 takes part_size 1
    only), issue 20. Initial values have at least as many rows as a part (fewer need the If
    of BranchZeroRunsOfReshapedCarries to run zero times on the CPU at `none`); zero-iteration
    runs after runs with some."""
    body = loop_body(
        [
            node("Cast", ["i"], ["fi"], to=T.FLOAT),
            node("Reshape", ["fi", "one"], ["row"]),
            node("Neg", ["row"], ["negated"]),
            node("Concat", ["row", "negated"], ["v_part"], axis=0),
            node("Mul", ["w", "fi"], ["m_part"]),
            node("Concat", ["v_in", "v_part"], ["v_out"], axis=0),
            node("Concat", ["m_in", "m_part"], ["m_out"], axis=1),
            node("Less", ["i", "k"], ["keep_going"]),
        ],
        [typed("v_in", T.FLOAT, [None]), typed("m_in", T.FLOAT, [2, None])],
        [
            typed("keep_going", T.BOOL, []),
            typed("v_out", T.FLOAT, [None]),
            typed("m_out", T.FLOAT, [2, None]),
        ],
        initializers=[const("one", [1], np.int64)],
    )
    main = graph(
        [node("Loop", ["M", "c0", "v0", "m0"], ["v", "m"], body=body)],
        [
            typed("M", T.INT64, []),
            typed("c0", T.BOOL, []),
            typed("k", T.INT64, []),
            typed("w", T.FLOAT, [2, 3]),
            typed("v0", T.FLOAT, [2]),
            typed("m0", T.FLOAT, [2, 3]),
        ],
        [typed("v", T.FLOAT, [None]), typed("m", T.FLOAT, [2, None])],
    )
    controls = [(3, 1, 9), (0, 1, 9), (20, 1, 17), (2, 0, 9), (5, 1, 2), (1, 1, 9), (0, 1, 9)]
    runs = [
        {
            "M": np.array(m, np.int64),
            "c0": np.array(bool(c)),
            "k": np.array(k, np.int64),
            "w": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
            "v0": np.array([1.0, 2.0], np.float32),
            "m0": np.arange(6, dtype=np.float32).reshape(2, 3),
        }
        for m, c, k in controls
    ]
    return model(main), runs


def _unread_growth(name: str) -> list[onnx.NodeProto]:
    """Loop `name`(M, c = s * W [2, 2], k = s): c = Concat(c, s * P [2, 1], axis 1) and
    k = i / 2 each iteration; only k's final value, `name`_k, is read. Every name starts
    with `name` (ONNX names are unique across nested graphs)."""
    n = f"{name}_"
    body = loop_body(
        [
            node("Concat", [n + "c_in", n + "sp"], [n + "c_out"], axis=1),
            node("Cast", [n + "i"], [n + "fi"], to=T.FLOAT),
            node("Mul", [n + "fi", "half"], [n + "k_out"]),
            node("Identity", [n + "cond_in"], [n + "go"]),
        ],
        [typed(n + "c_in", T.FLOAT, [2, None]), typed(n + "k_in", T.FLOAT, [])],
        [
            typed(n + "go", T.BOOL, []),
            typed(n + "c_out", T.FLOAT, [2, None]),
            typed(n + "k_out", T.FLOAT, []),
        ],
        iteration=n + "i",
        condition=n + "cond_in",
    )
    return [
        node("Mul", ["s", "W"], [n + "c0"]),
        node("Mul", ["s", "P"], [n + "sp"]),
        node("Loop", ["M", "", n + "c0", "s"], [n + "c", n + "k"], body=body, name=name),
    ]


@scenario
def loop_in_a_body_with_an_unread_grown_carried_value():
    """A Loop over the rows of X whose body runs a Loop carrying c, entering as [2, 2] and
    growing along axis 1, whose final value nothing reads (k's is). At `none` each run with
    iterations failed: "Node .../inner of type Loop: object is not initialized" (the CPU
    plugin, for a Loop output never read of a value entering with a static length it
    changes; issue 20, the differential campaign's seed 2100600038 cut down). At the top
    level too."""
    outer_body = loop_body(
        [
            node("Gather", ["X", "j"], ["x_j"], axis=0),
            *_unread_growth("inner"),
            node("ReduceSum", ["x_j"], ["row"], keepdims=0),
            node("Add", ["inner_k", "row"], ["y"]),
        ],
        [],
        [typed("go", T.BOOL, []), typed("y", T.FLOAT, [])],
        iteration="j",
    )
    outer_body.node.append(node("Identity", ["cond_in"], ["go"]))
    main = graph(
        [
            node("Shape", ["X"], ["shape"]),
            node("Gather", ["shape", "zero"], ["rows"], axis=0),
            node("Loop", ["rows", ""], ["ys"], body=outer_body, name="outer"),
            *_unread_growth("top"),
        ],
        [typed("X", T.FLOAT, [None, 2]), typed("s", T.FLOAT, []), typed("M", T.INT64, [])],
        [typed("ys", T.FLOAT, [None]), typed("top_k", T.FLOAT, [])],
        [
            const("zero", 0, np.int64),
            const("half", 0.5),
            const("W", [[1.0, 2.0], [-1.0, 2.0]]),
            const("P", [[2.0], [-1.0]]),
        ],
    )
    rng = np.random.default_rng(38)
    runs = [
        {
            "X": rng.standard_normal((rows, 2)).astype(np.float32),
            "s": np.array(0.35, np.float32),
            "M": np.array(m, np.int64),
        }
        for rows, m in ((3, 3), (4, 0), (2, 2), (0, 1), (3, 0))
    ]
    return model(main), runs


@scenario
def loop_scan_outputs_scalar_and_matrix():
    """K = 2 scan outputs: a scalar and a 2x3 matrix per iteration, stacked on a new axis 0."""
    body = loop_body(
        [
            node("Cast", ["i"], ["fi"], to=T.FLOAT),
            node("Mul", ["w", "fi"], ["mat"]),
            node("Add", ["s_in", "fi"], ["s_out"]),
            node("Identity", ["cond_in"], ["keep_going"]),
        ],
        [typed("s_in", T.FLOAT, [])],
        [
            typed("keep_going", T.BOOL, []),
            typed("s_out", T.FLOAT, []),
            typed("fi", T.FLOAT, []),
            typed("mat", T.FLOAT, [2, 3]),
        ],
    )
    main = graph(
        [node("Loop", ["M", "", "s0"], ["s", "scalars", "mats"], body=body)],
        [typed("M", T.INT64, []), typed("s0", T.FLOAT, []), typed("w", T.FLOAT, [2, 3])],
        [
            typed("s", T.FLOAT, []),
            typed("scalars", T.FLOAT, [None]),
            typed("mats", T.FLOAT, [None, 2, 3]),
        ],
    )
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    runs = [
        {"M": np.array(m, np.int64), "s0": np.array(0.25, np.float32), "w": w} for m in (4, 0, 1)
    ]
    return model(main), runs


@scenario
def loop_stops_early_reading_iteration_number():
    """y += x * i until sum(y) >= limit, at most M times; no scan output (M pinned to a
    constant, a masked, fully unrolled loop: later copies must not change y)."""
    body = loop_body(
        [
            node("Cast", ["i"], ["i_f"], to=T.FLOAT),
            node("Mul", ["x", "i_f"], ["step"]),
            node("Add", ["y_in", "step"], ["y_out"]),
            node("ReduceSum", ["y_out"], ["total"], keepdims=0),
            node("Less", ["total", "limit"], ["keep_going"]),
        ],
        [typed("y_in", T.FLOAT, [2])],
        [typed("keep_going", T.BOOL, []), typed("y_out", T.FLOAT, [2])],
    )
    main = graph(
        [node("Loop", ["M", "", "y0"], ["y"], body=body)],
        [
            typed("M", T.INT64, []),
            typed("x", T.FLOAT, [2]),
            typed("y0", T.FLOAT, [2]),
            typed("limit", T.FLOAT, []),
        ],
        [typed("y", T.FLOAT, [2])],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "x": np.array([1.0, 2.0], np.float32),
            "y0": np.array([0.5, -0.5], np.float32),
            "limit": np.array(limit, np.float32),
        }
        for m, limit in [(6, 1e9), (6, 10.0), (6, -1.0), (0, 1.0)]
    ]
    return model(main), runs


@scenario
def loop_no_scan_outputs():
    """K = 0: only loop-carried values."""
    body = loop_body(
        [node("Mul", ["p_in", "two"], ["p_out"]), node("Identity", ["cond_in"], ["keep_going"])],
        [typed("p_in", T.INT32, [])],
        [typed("keep_going", T.BOOL, []), typed("p_out", T.INT32, [])],
        initializers=[const("two", 2, np.int32)],
    )
    main = graph(
        [node("Loop", ["M", "", "p0"], ["p"], body=body)],
        [typed("M", T.INT64, []), typed("p0", T.INT32, [])],
        [typed("p", T.INT32, [])],
    )
    runs = [{"M": np.array(m, np.int64), "p0": np.array(3, np.int32)} for m in (10, 0, 1)]
    return model(main), runs


@scenario
def loop_captures_main_graph_and_initializer():
    """The body reads a main-graph input and a main-graph initializer by name."""
    body = loop_body(
        [
            node("MatMul", ["h_in", "W"], ["hw"]),
            node("Add", ["hw", "bias"], ["pre"]),
            node("Tanh", ["pre"], ["h_out"]),
            node("Identity", ["cond_in"], ["keep_going"]),
        ],
        [typed("h_in", T.FLOAT, [1, 4])],
        [
            typed("keep_going", T.BOOL, []),
            typed("h_out", T.FLOAT, [1, 4]),
            typed("h_out", T.FLOAT, [1, 4]),
        ],
    )
    rng = np.random.default_rng(0)
    main = graph(
        [node("Loop", ["M", "", "h0"], ["h", "hs"], body=body)],
        [typed("M", T.INT64, []), typed("h0", T.FLOAT, [1, 4]), typed("W", T.FLOAT, [4, 4])],
        [typed("h", T.FLOAT, [1, 4]), typed("hs", T.FLOAT, [None, 1, 4])],
        initializers=[const("bias", rng.standard_normal((1, 4)))],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "h0": rng.standard_normal((1, 4)).astype(np.float32),
            "W": rng.standard_normal((4, 4)).astype(np.float32) * 0.5,
        }
        for m in (6, 0, 3)
    ]
    return model(main), runs


@scenario
def loop_nested_three_deep_with_captures():
    """Loop in Loop in Loop; inner bodies read the main graph and the enclosing bodies' values."""
    inner = loop_body(
        [
            node("Cast", ["k"], ["fk"], to=T.FLOAT),
            node("Mul", ["fk", "scale"], ["a"]),
            node("Add", ["a", "fj"], ["b"]),
            node("Add", ["b", "outer_acc"], ["c"]),
            node("Add", ["z_in", "c"], ["z_out"]),
            node("Identity", ["cond_k"], ["keep_k"]),
        ],
        [typed("z_in", T.FLOAT, [])],
        [typed("keep_k", T.BOOL, []), typed("z_out", T.FLOAT, []), typed("c", T.FLOAT, [])],
        iteration="k",
        condition="cond_k",
    )
    middle = loop_body(
        [
            node("Cast", ["j"], ["fj"], to=T.FLOAT),
            node("Loop", ["inner_trips", "", "y_in"], ["y_out", "cs"], body=inner),
            node("ReduceSum", ["cs"], ["cs_sum"], keepdims=0),
            node("Identity", ["cond_j"], ["keep_j"]),
        ],
        [typed("y_in", T.FLOAT, [])],
        [typed("keep_j", T.BOOL, []), typed("y_out", T.FLOAT, []), typed("cs_sum", T.FLOAT, [])],
        iteration="j",
        condition="cond_j",
    )
    outer = loop_body(
        [
            node("Loop", ["middle_trips", "", "outer_acc"], ["mid_acc", "sums"], body=middle),
            node("ReduceSum", ["sums"], ["s"], keepdims=0),
            node("Add", ["mid_acc", "s"], ["acc_out"]),
            node("Identity", ["cond_in"], ["keep_going"]),
        ],
        [typed("outer_acc", T.FLOAT, [])],
        [
            typed("keep_going", T.BOOL, []),
            typed("acc_out", T.FLOAT, []),
            typed("mid_acc", T.FLOAT, []),
        ],
    )
    main = graph(
        [node("Loop", ["M", "", "acc0"], ["acc", "mids"], body=outer)],
        [
            typed("M", T.INT64, []),
            typed("acc0", T.FLOAT, []),
            typed("scale", T.FLOAT, []),
            typed("middle_trips", T.INT64, []),
            typed("inner_trips", T.INT64, []),
        ],
        [typed("acc", T.FLOAT, []), typed("mids", T.FLOAT, [None])],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "acc0": np.array(0.5, np.float32),
            "scale": np.array(0.25, np.float32),
            "middle_trips": np.array(j, np.int64),
            "inner_trips": np.array(k, np.int64),
        }
        for m, j, k in [(3, 2, 4), (2, 0, 3), (0, 2, 2), (2, 3, 0), (4, 1, 1)]
    ]
    return model(main), runs


@scenario
def loop_inside_if_branches():
    """Each If branch holds its own Loop reading a main-graph value."""

    def branch(op, tag):
        body = loop_body(
            [
                node(op, ["v_in", "x"], [f"v_out_{tag}"]),
                node("Identity", ["cond_in"], [f"keep_{tag}"]),
            ],
            [typed("v_in", T.FLOAT, [3])],
            [
                typed(f"keep_{tag}", T.BOOL, []),
                typed(f"v_out_{tag}", T.FLOAT, [3]),
                typed(f"v_out_{tag}", T.FLOAT, [3]),
            ],
        )
        return graph(
            [node("Loop", ["M", "", "v0"], [f"r_{tag}", f"all_{tag}"], body=body)],
            [],
            [typed(f"r_{tag}", T.FLOAT, [3]), typed(f"all_{tag}", T.FLOAT, [None, 3])],
            name=tag,
        )

    main = graph(
        [
            node(
                "If",
                ["flag"],
                ["r", "all"],
                then_branch=branch("Add", "then"),
                else_branch=branch("Mul", "else"),
            )
        ],
        [
            typed("flag", T.BOOL, []),
            typed("M", T.INT64, []),
            typed("v0", T.FLOAT, [3]),
            typed("x", T.FLOAT, [3]),
        ],
        [typed("r", T.FLOAT, [3]), typed("all", T.FLOAT, [None, 3])],
    )
    runs = [
        {
            "flag": np.array(f),
            "M": np.array(m, np.int64),
            "v0": np.array([1.0, 2.0, 3.0], np.float32),
            "x": np.array([1.5, 0.5, -1.0], np.float32),
        }
        for f, m in [(True, 3), (False, 4), (True, 0), (False, 2)]
    ]
    return model(main), runs


@scenario
def if_inside_loop_body():
    """An If in the body picks add or multiply by the parity of the iteration number."""
    then_branch = graph(
        [node("Add", ["y_in", "one"], ["t"])], [], [typed("t", T.FLOAT, [2])], name="then"
    )
    else_branch = graph(
        [node("Mul", ["y_in", "two"], ["e"])], [], [typed("e", T.FLOAT, [2])], name="else"
    )
    body = loop_body(
        [
            node("Mod", ["i", "two_i"], ["parity"]),
            node("Equal", ["parity", "zero_i"], ["even"]),
            node("If", ["even"], ["y_out"], then_branch=then_branch, else_branch=else_branch),
            node("Identity", ["cond_in"], ["keep_going"]),
        ],
        [typed("y_in", T.FLOAT, [2])],
        [
            typed("keep_going", T.BOOL, []),
            typed("y_out", T.FLOAT, [2]),
            typed("y_out", T.FLOAT, [2]),
        ],
        initializers=[
            const("two_i", 2, np.int64),
            const("zero_i", 0, np.int64),
            const("one", 1.0),
            const("two", 2.0),
        ],
    )
    main = graph(
        [node("Loop", ["M", "", "y0"], ["y", "ys"], body=body)],
        [typed("M", T.INT64, []), typed("y0", T.FLOAT, [2])],
        [typed("y", T.FLOAT, [2]), typed("ys", T.FLOAT, [None, 2])],
    )
    runs = [
        {"M": np.array(m, np.int64), "y0": np.array([1.0, -2.0], np.float32)} for m in (5, 0, 2)
    ]
    return model(main), runs


@scenario
def loop_body_passthrough_outputs():
    """tf2onnx-style: body outputs pass inputs and an initializer straight through."""
    body = loop_body(
        [
            node("Add", ["counter_in", "one"], ["counter_out"]),
            node("Less", ["counter_out", "limit"], ["keep_going"]),
        ],
        [
            typed("counter_in", T.INT64, []),
            typed("fixed_in", T.FLOAT, [2]),
            typed("limit_in", T.INT64, []),
        ],
        [
            typed("keep_going", T.BOOL, []),
            typed("counter_out", T.INT64, []),
            typed("fixed_in", T.FLOAT, [2]),
            typed("limit_in", T.INT64, []),
            typed("const_row", T.FLOAT, [2]),
        ],
        initializers=[const("one", 1, np.int64), const("const_row", [4.0, 5.0])],
    )
    main = graph(
        [
            node(
                "Loop",
                ["M", "c0", "zero", "x", "limit"],
                ["count", "fixed", "lim", "rows"],
                body=body,
            )
        ],
        [
            typed("M", T.INT64, []),
            typed("c0", T.BOOL, []),
            typed("x", T.FLOAT, [2]),
            typed("limit", T.INT64, []),
        ],
        [
            typed("count", T.INT64, []),
            typed("fixed", T.FLOAT, [2]),
            typed("lim", T.INT64, []),
            typed("rows", T.FLOAT, [None, 2]),
        ],
        initializers=[const("zero", 0, np.int64)],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "c0": np.array(c),
            "x": np.array([1.0, 2.0], np.float32),
            "limit": np.array(lim, np.int64),
        }
        for m, c, lim in [(I64_MAX, True, 5), (3, True, 10), (4, False, 10), (2, True, 1)]
    ]
    return model(main), runs


def _untyped_body(iteration_and_condition_typed: bool = True):
    """v = v + v; scan out v * i. Carried inputs and all outputs untyped."""
    if iteration_and_condition_typed:  # onnxruntime insists on these two
        first = [typed("it", T.INT64, []), typed("c", T.BOOL, [])]
    else:
        first = [untyped("it"), untyped("c")]
    return graph(
        [
            node("Add", ["v_in", "v_in"], ["v_out"]),
            node("Identity", ["c"], ["c_out"]),
            node("Cast", ["it"], ["fit"], to=T.FLOAT),
            node("Mul", ["v_out", "fit"], ["scan"]),
        ],
        [*first, untyped("v_in")],
        [untyped("c_out"), untyped("v_out"), untyped("scan")],
        name="body",
    )


@scenario
def loop_untyped_body_inputs_and_outputs(iteration_and_condition_typed: bool = True):
    """Body inputs and outputs without type information."""
    main = graph(
        [
            node(
                "Loop",
                ["M", "", "v0"],
                ["v", "scans"],
                body=_untyped_body(iteration_and_condition_typed),
            )
        ],
        [typed("M", T.INT64, []), typed("v0", T.FLOAT, [2, 2])],
        [typed("v", T.FLOAT, [2, 2]), typed("scans", T.FLOAT, [None, 2, 2])],
    )
    v0 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    return model(main), [{"M": np.array(m, np.int64), "v0": v0} for m in (3, 0, 1)]


@scenario
def loop_untyped_body_in_if_branch_with_runtime_trip_count_and_condition():
    """An untyped body in an If branch, with M of shape [1] and a runtime condition: the
    zero-iteration guard (a VariadicSplit) inside a branch, where zero-iteration runs follow
    runs with iterations."""
    loop = node("Loop", ["M", "c0", "v0"], ["v", "scans"], body=_untyped_body())
    then_branch = graph([loop], [], [untyped("v"), untyped("scans")], name="then")
    else_branch = graph(
        [node("Identity", ["v0"], ["v_else"]), node("Unsqueeze", ["v0", "axes"], ["scans_else"])],
        [],
        [untyped("v_else"), untyped("scans_else")],
        name="else",
    )
    main = graph(
        [
            node(
                "If",
                ["flag"],
                ["v_out", "scans_out"],
                then_branch=then_branch,
                else_branch=else_branch,
            )
        ],
        [
            typed("flag", T.BOOL, []),
            typed("M", T.INT64, [1]),
            typed("c0", T.BOOL, []),
            typed("v0", T.FLOAT, [2, 2]),
        ],
        [typed("v_out", T.FLOAT, [2, 2]), typed("scans_out", T.FLOAT, [None, 2, 2])],
        initializers=[const("axes", [0], np.int64)],
    )
    v0 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    runs = [
        {"flag": np.array(flag), "M": np.array([m], np.int64), "c0": np.array(c), "v0": v0}
        for flag, m, c in [(True, 3, True), (True, 0, True), (False, 2, True), (True, 2, False)]
    ]
    return model(main), runs


@scenario
def loop_trip_count_int64_max_constant():
    """A constant INT64_MAX trip count means "unbounded": the body condition stops the loop."""
    body = loop_body(
        [node("Add", ["n_in", "one"], ["n_out"]), node("Less", ["n_out", "limit"], ["keep"])],
        [typed("n_in", T.INT64, [])],
        [typed("keep", T.BOOL, []), typed("n_out", T.INT64, []), typed("n_out", T.INT64, [])],
        initializers=[const("one", 1, np.int64)],
    )
    main = graph(
        [node("Loop", ["big", "", "n0"], ["n", "ns"], body=body)],
        [typed("n0", T.INT64, []), typed("limit", T.INT64, [])],
        [typed("n", T.INT64, []), typed("ns", T.INT64, [None])],
        initializers=[const("big", I64_MAX, np.int64)],
    )
    runs = [{"n0": np.array(0, np.int64), "limit": np.array(lim, np.int64)} for lim in (7, 1, 3)]
    return model(main), runs


@scenario
def loop_runtime_trip_count_beyond_int32():
    """Runtime trip counts INT64_MAX and 2**32+3 must not be truncated to i32 (0 or 3 runs)."""
    loop_model, _ = loop_trip_count_and_condition()
    runs = []
    for m, limit in [(I64_MAX, 30.0), (2**32 + 3, 40.0), (2**31 - 1, 20.0), (-5, 1e9), (3, 1e9)]:
        runs.append(
            {
                "x": np.array([1.0, 2.0], np.float32),
                "y0": np.zeros(2, np.float32),
                "limit": np.array(limit, np.float32),
                "M": np.array(m, np.int64),
                "c0": np.array(True),
            }
        )
    return loop_model, runs


def _folded(trip_value, condition_value):
    body = loop_body(
        [node("Add", ["y_in", "one"], ["y_out"]), node("Identity", ["cond_in"], ["keep"])],
        [typed("y_in", T.FLOAT, [3])],
        [typed("keep", T.BOOL, []), typed("y_out", T.FLOAT, [3]), typed("y_out", T.FLOAT, [3])],
        initializers=[const("one", 1.0)],
    )
    main = graph(
        [node("Loop", ["trips", "start", "y0"], ["y", "ys"], body=body)],
        [typed("y0", T.FLOAT, [3])],
        [typed("y", T.FLOAT, [3]), typed("ys", T.FLOAT, [None, 3])],
        initializers=[const("trips", trip_value, np.int64), const("start", condition_value, bool)],
    )
    return model(main), [{"y0": np.array([1.0, 2.0, 3.0], np.float32)}]


@scenario
def loop_constant_zero_trip_count_folded():
    return _folded(0, True)


@scenario
def loop_constant_false_condition_folded():
    return _folded(5, False)


@scenario
def loop_reads_capture_at_iteration_number():
    """x_t = Gather(X, i) on a captured X becomes a sliced input; Gathers on axis 1 or at another
    index stay as they are. A while loop: it stops after the last row or at `limit`; with M
    absent the trip count is capped at len(X)."""
    body = loop_body(
        [
            node("Gather", ["X", "i"], ["x_t"], axis=0),
            node("Gather", ["X", "zero"], ["x_first"], axis=0),
            node("Gather", ["Y", "i"], ["y_col"], axis=1),
            node("Add", ["x_t", "x_first"], ["a"]),
            node("ReduceSum", ["y_col"], ["y_sum"], keepdims=0),
            node("Add", ["a", "y_sum"], ["b"]),
            node("Add", ["acc_in", "b"], ["acc_out"]),
            node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            node("Less", ["total", "limit"], ["below_limit"]),
            node("Add", ["i", "one"], ["next_i"]),
            node("Less", ["next_i", "rows"], ["more_rows"]),
            node("And", ["below_limit", "more_rows"], ["keep"]),
        ],
        [typed("acc_in", T.FLOAT, [3])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [3]), typed("x_t", T.FLOAT, [3])],
        initializers=[const("zero", 0, np.int64), const("one", 1, np.int64)],
    )
    main = graph(
        [
            node("Shape", ["X"], ["x_shape"], start=0, end=1),
            node("Squeeze", ["x_shape"], ["rows"]),
            node("Greater", ["rows", "zero_rows"], ["has_rows"]),
            node("Loop", ["", "has_rows", "acc0"], ["acc", "xs"], body=body),
        ],
        [
            typed("X", T.FLOAT, ["T", 3]),
            typed("Y", T.FLOAT, [2, None]),
            typed("acc0", T.FLOAT, [3]),
            typed("limit", T.FLOAT, []),
        ],
        [typed("acc", T.FLOAT, [3]), typed("xs", T.FLOAT, [None, 3])],
        initializers=[const("zero_rows", 0, np.int64)],
    )
    rng = np.random.default_rng(5)
    runs = []
    for steps, limit in [(6, 1e9), (9, 40.0), (1, 1e9), (0, 1e9), (4, 1e9)]:
        runs.append(
            {
                "X": rng.standard_normal((steps, 3)).astype(np.float32) + 1.0,
                "Y": rng.standard_normal((2, steps + 2)).astype(np.float32),
                "acc0": np.zeros(3, np.float32),
                "limit": np.array(limit, np.float32),
            }
        )
    return model(main), runs


@scenario
def loop_reads_capture_at_iteration_number_of_shape_1():
    """Gather(X, i) with i declared [1] keeps a length-1 axis (rows stack to (T, 1, 3)), so it
    is not turned into a sliced input as a Gather at a scalar iteration number is."""
    body = graph(
        [
            node("Gather", ["X", "i"], ["row"], axis=0),
            node("Add", ["acc_in", "row"], ["acc_out"]),
            node("Identity", ["row"], ["rows"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("i", T.INT64, [1]), typed("cond_in", T.BOOL, []), typed("acc_in", T.FLOAT, [1, 3])],
        [
            typed("keep", T.BOOL, []),
            typed("acc_out", T.FLOAT, [1, 3]),
            typed("rows", T.FLOAT, [1, 3]),
        ],
        name="body",
    )
    main = graph(
        [node("Loop", ["M", "", "acc0"], ["acc", "all_rows"], body=body)],
        [typed("M", T.INT64, []), typed("X", T.FLOAT, [None, 3]), typed("acc0", T.FLOAT, [1, 3])],
        [typed("acc", T.FLOAT, [1, 3]), typed("all_rows", T.FLOAT, [None, 1, 3])],
    )
    rng = np.random.default_rng(3)
    runs = [
        {
            "M": np.array(t, np.int64),
            "X": rng.standard_normal((4, 3)).astype(np.float32),
            "acc0": np.zeros((1, 3), np.float32),
        }
        for t in (3, 0, 4)
    ]
    return model(main), runs


@scenario
def loop_carried_value_is_the_current_slice():
    """carried <- Gather(X, i) (a sliced input, so a view of the slice); the scan output reads
    the previous row. Exercises the copy ov-loops puts on such back edges."""
    body = loop_body(
        [
            node("Gather", ["X", "i"], ["row"], axis=0),
            node("Identity", ["prev_in"], ["prev"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("prev_in", T.FLOAT, [3])],
        [typed("keep", T.BOOL, []), typed("row", T.FLOAT, [3]), typed("prev", T.FLOAT, [3])],
    )
    main = graph(
        [node("Loop", ["M", "", "r0"], ["last", "previous_rows"], body=body)],
        [typed("M", T.INT64, []), typed("r0", T.FLOAT, [3]), typed("X", T.FLOAT, ["T", 3])],
        [typed("last", T.FLOAT, [3]), typed("previous_rows", T.FLOAT, [None, 3])],
    )
    rng = np.random.default_rng(9)
    runs = [
        {
            "M": np.array(t, np.int64),
            "r0": rng.standard_normal(3).astype(np.float32),
            "X": rng.standard_normal((t, 3)).astype(np.float32),
        }
        for t in (5, 0, 2)
    ]
    return model(main), runs


def _constant_while_body(name: str = "body") -> onnx.GraphProto:
    """Scan out If(i is even, [i, -i], [2i, 1]) while i < 3; the then branch also computes
    Neg(x) of a captured x and drops it (OpenVINO then drops the Loop's x input)."""
    then_branch = graph(
        [
            node("Neg", ["x"], ["dropped"]),
            node("Mul", ["i_f", "plus_minus"], ["t"]),
        ],
        [],
        [typed("t", T.FLOAT, [2])],
        name="then",
    )
    else_branch = graph(
        [node("Mul", ["i_f", "twice"], ["e0"]), node("Add", ["e0", "unit"], ["e"])],
        [],
        [typed("e", T.FLOAT, [2])],
        name="else",
    )
    body = loop_body(
        [
            node("Cast", ["i"], ["i_f"], to=T.FLOAT),
            node("Mod", ["i", "two_i"], ["parity"]),
            node("Equal", ["parity", "zero_i"], ["even"]),
            node("If", ["even"], ["part"], then_branch=then_branch, else_branch=else_branch),
            node("Less", ["i", "three_i"], ["keep_going"]),
        ],
        [],
        [typed("keep_going", T.BOOL, []), typed("part", T.FLOAT, [2])],
        initializers=[
            const("two_i", 2, np.int64),
            const("zero_i", 0, np.int64),
            const("three_i", 3, np.int64),
            const("plus_minus", [1.0, -1.0]),
            const("twice", [2.0, 0.0]),
            const("unit", [0.0, 1.0]),
        ],
    )
    body.name = name
    return body


@scenario
def loop_of_constants_with_if_stops_early():
    """A Loop whose trip count (absent) and condition (true) are constants, an If in its body,
    and a stack whose length the body's condition decides (seed 42424020 of the differential
    campaign, minimised): the CPU plugin would treat the Loop as a constant and fail to give its
    stack static memory ("Can not create StaticMemory object")."""
    main = graph(
        [
            node("Loop", ["", "start"], ["parts"], body=_constant_while_body()),
            node("Add", ["x", "x"], ["doubled"]),
        ],
        [typed("x", T.FLOAT, [2])],
        [typed("parts", T.FLOAT, [None, 2]), typed("doubled", T.FLOAT, [2])],
        initializers=[const("start", True, bool)],
    )
    return model(main), [{"x": np.array([1.0, -3.0], np.float32)}] * 2


@scenario
def loop_of_constants_nested_in_a_runtime_loop():
    """The Loop of `loop_of_constants_with_if_stops_early` inside the body of a Loop of M
    iterations: its inputs are Constants of the outer body."""
    outer = loop_body(
        [
            node("Loop", ["", "start"], ["parts"], body=_constant_while_body("inner")),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [],
        [typed("go", T.BOOL, []), typed("parts", T.FLOAT, [None, 2])],
        initializers=[const("start", True, bool)],
    )
    main = graph(
        [node("Loop", ["M", ""], ["stacks"], body=outer)],
        [typed("M", T.INT64, []), typed("x", T.FLOAT, [2])],
        [typed("stacks", T.FLOAT, [None, None, 2])],
    )
    feeds = [{"M": np.array(m, np.int64), "x": np.array([1.0, 2.0], np.float32)} for m in (2, 3)]
    return model(main), feeds
