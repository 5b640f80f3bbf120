"""ONNX Scan scenario models, each named for what it exercises.

Every builder returns (model, feeds): feeds run in order on one compiled model, with
zero-length sequences placed after runs with iterations.
Each public function is a scenario, registered in SCENARIOS by `@scenario` under its name;
helpers are private.
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.onnx_builders import T, const, graph, model, node, typed
from tests.registry import Registry

RNG = np.random.default_rng(11)
SCENARIOS: Registry = Registry("Scan scenario")
scenario = SCENARIOS.register


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _zero_length(feeds, states, empty_outputs):
    """A run onnxruntime cannot do: a zero-length scan returns its initial states and empty
    scan outputs (of the given shapes)."""
    expected = [feeds[name] for name in states]
    expected += [np.zeros(shape, np.float32) for shape in empty_outputs]
    return feeds, expected


def _scan(inputs, outputs, body, opset=16, **attrs):
    return node("Scan", inputs, outputs, body=body, **attrs)


def _running_sum_body(width, extra_nodes=(), element=T.FLOAT):
    """state += x_t; scan out the state."""
    return graph(
        [
            node("Add", ["s_in", "x_t"], ["s_out"]),
            node("Identity", ["s_out"], ["y_t"]),
            *extra_nodes,
        ],
        [typed("s_in", element, [width]), typed("x_t", element, [width])],
        [typed("s_out", element, [width]), typed("y_t", element, [width])],
        name="body",
    )


@scenario
def scan_forward_running_sum():
    """Scan-9+: one state, one scan input on axis 0, one scan output; dynamic length incl. 0."""
    main = graph(
        [_scan(["s0", "x"], ["s", "ys"], _running_sum_body(3), num_scan_inputs=1)],
        [typed("s0", T.FLOAT, [3]), typed("x", T.FLOAT, ["T", 3])],
        [typed("s", T.FLOAT, [3]), typed("ys", T.FLOAT, ["T", 3])],
    )
    runs = [{"s0": _f32(3), "x": _f32(t, 3)} for t in (5, 1, 7)]
    runs.insert(1, _zero_length({"s0": _f32(3), "x": _f32(0, 3)}, ["s0"], [(0, 3)]))
    return model(main), runs


@scenario
def scan_reverse_axis1_prepend():
    """Reverse scan input on axis 1; output prepended, accumulated on axis 1."""
    main = graph(
        [
            _scan(
                ["s0", "x"],
                ["s", "ys"],
                _running_sum_body(3),
                num_scan_inputs=1,
                scan_input_axes=[1],
                scan_input_directions=[1],
                scan_output_axes=[1],
                scan_output_directions=[1],
            )
        ],
        [typed("s0", T.FLOAT, [3]), typed("x", T.FLOAT, [3, "T"])],
        [typed("s", T.FLOAT, [3]), typed("ys", T.FLOAT, [3, "T"])],
    )
    runs = [{"s0": _f32(3), "x": _f32(3, t)} for t in (4, 6)]
    runs.insert(1, _zero_length({"s0": _f32(3), "x": _f32(3, 0)}, ["s0"], [(3, 0)]))
    return model(main), runs


@scenario
def scan_negative_axes():
    """scan_input_axes=[-1], scan_output_axes=[-1] (normalised; the IR holds no negative axis)."""
    main = graph(
        [
            _scan(
                ["s0", "x"],
                ["s", "ys"],
                _running_sum_body(2),
                num_scan_inputs=1,
                scan_input_axes=[-1],
                scan_output_axes=[-1],
            )
        ],
        [typed("s0", T.FLOAT, [2]), typed("x", T.FLOAT, [2, "T"])],
        [typed("s", T.FLOAT, [2]), typed("ys", T.FLOAT, [2, "T"])],
    )
    runs = [{"s0": _f32(2), "x": _f32(2, t)} for t in (3, 5)]
    runs.insert(1, _zero_length({"s0": _f32(2), "x": _f32(2, 0)}, ["s0"], [(2, 0)]))
    return model(main), runs


@scenario
def scan_several_inputs_on_different_axes():
    """Two scan inputs (axis 0 and axis 2), two states, three scan outputs on axes 0, 1, -1."""
    body = graph(
        [
            node("Add", ["a_in", "u_t"], ["a_out"]),
            node("Mul", ["b_in", "v_t"], ["b_out"]),
            node("ReduceSum", ["v_t"], ["v_sum"], keepdims=0),
            node("Identity", ["a_out"], ["o1"]),
            node("Identity", ["b_out"], ["o2"]),
            node("Identity", ["v_sum"], ["o3"]),
        ],
        [
            typed("a_in", T.FLOAT, [2]),
            typed("b_in", T.FLOAT, [2, 2]),
            typed("u_t", T.FLOAT, [2]),
            typed("v_t", T.FLOAT, [2, 2]),
        ],
        [
            typed("a_out", T.FLOAT, [2]),
            typed("b_out", T.FLOAT, [2, 2]),
            typed("o1", T.FLOAT, [2]),
            typed("o2", T.FLOAT, [2, 2]),
            typed("o3", T.FLOAT, []),
        ],
        name="body",
    )
    main = graph(
        [
            _scan(
                ["a0", "b0", "u", "v"],
                ["a", "b", "y1", "y2", "y3"],
                body,
                num_scan_inputs=2,
                scan_input_axes=[0, 2],
                scan_output_axes=[0, 1, -1],
            )
        ],
        [
            typed("a0", T.FLOAT, [2]),
            typed("b0", T.FLOAT, [2, 2]),
            typed("u", T.FLOAT, ["T", 2]),
            typed("v", T.FLOAT, [2, 2, "T"]),
        ],
        [
            typed("a", T.FLOAT, [2]),
            typed("b", T.FLOAT, [2, 2]),
            typed("y1", T.FLOAT, ["T", 2]),
            typed("y2", T.FLOAT, [2, "T", 2]),
            typed("y3", T.FLOAT, ["T"]),
        ],
    )
    runs = [{"a0": _f32(2), "b0": _f32(2, 2), "u": _f32(t, 2), "v": _f32(2, 2, t)} for t in (4, 2)]
    empty = {"a0": _f32(2), "b0": _f32(2, 2), "u": _f32(0, 2), "v": _f32(2, 2, 0)}
    runs.insert(1, _zero_length(empty, ["a0", "b0"], [(0, 2), (2, 0, 2), (0,)]))
    return model(main), runs


@scenario
def scan_bidirectional_same_input_twice():
    """The same tensor scanned forward and backward in one Scan."""
    body = graph(
        [
            node("Add", ["f_in", "fwd_t"], ["f_out"]),
            node("Add", ["r_in", "bwd_t"], ["r_out"]),
            node("Concat", ["f_out", "r_out"], ["both"], axis=0),
        ],
        [
            typed("f_in", T.FLOAT, [2]),
            typed("r_in", T.FLOAT, [2]),
            typed("fwd_t", T.FLOAT, [2]),
            typed("bwd_t", T.FLOAT, [2]),
        ],
        [typed("f_out", T.FLOAT, [2]), typed("r_out", T.FLOAT, [2]), typed("both", T.FLOAT, [4])],
        name="body",
    )
    main = graph(
        [
            _scan(
                ["z", "z", "x", "x"],
                ["f", "r", "ys"],
                body,
                num_scan_inputs=2,
                scan_input_directions=[0, 1],
            )
        ],
        [typed("z", T.FLOAT, [2]), typed("x", T.FLOAT, ["T", 2])],
        [typed("f", T.FLOAT, [2]), typed("r", T.FLOAT, [2]), typed("ys", T.FLOAT, ["T", 4])],
    )
    runs = [{"z": np.zeros(2, np.float32), "x": _f32(t, 2)} for t in (5, 3)]
    empty = {"z": np.zeros(2, np.float32), "x": _f32(0, 2)}
    runs.insert(1, (empty, [empty["z"], empty["z"], np.zeros((0, 4), np.float32)]))
    return model(main), runs


@scenario
def scan_reads_enclosing_scope():
    """The body reads a main-graph input and a main-graph initializer (OpenVINO rejects this)."""
    body = graph(
        [
            node("MatMul", ["h_in", "W"], ["hw"]),
            node("Add", ["hw", "x_t"], ["pre"]),
            node("Add", ["pre", "bias"], ["pre_b"]),
            node("Tanh", ["pre_b"], ["h_out"]),
            node("Identity", ["h_out"], ["y_t"]),
        ],
        [typed("h_in", T.FLOAT, [1, 4]), typed("x_t", T.FLOAT, [1, 4])],
        [typed("h_out", T.FLOAT, [1, 4]), typed("y_t", T.FLOAT, [1, 4])],
        name="body",
    )
    main = graph(
        [_scan(["h0", "x"], ["h", "ys"], body, num_scan_inputs=1)],
        [
            typed("h0", T.FLOAT, [1, 4]),
            typed("x", T.FLOAT, ["T", 1, 4]),
            typed("W", T.FLOAT, [4, 4]),
        ],
        [typed("h", T.FLOAT, [1, 4]), typed("ys", T.FLOAT, ["T", 1, 4])],
        initializers=[const("bias", _f32(1, 4))],
    )
    runs = [{"h0": _f32(1, 4), "x": _f32(t, 1, 4), "W": _f32(4, 4) * 0.5} for t in (6, 2)]
    empty = {"h0": _f32(1, 4), "x": _f32(0, 1, 4), "W": _f32(4, 4)}
    runs.insert(1, _zero_length(empty, ["h0"], [(0, 1, 4)]))
    return model(main), runs


@scenario
def scan_inside_scan():
    """An outer Scan over rows whose body runs an inner Scan over the row's elements."""
    inner = graph(
        [node("Add", ["acc_in", "e_t"], ["acc_out"]), node("Mul", ["acc_out", "scale"], ["o_t"])],
        [typed("acc_in", T.FLOAT, []), typed("e_t", T.FLOAT, [])],
        [typed("acc_out", T.FLOAT, []), typed("o_t", T.FLOAT, [])],
        name="inner",
    )
    outer = graph(
        [
            _scan(["total_in", "row_t"], ["total_out", "row_prefix"], inner, num_scan_inputs=1),
            node("Identity", ["row_prefix"], ["prefix_t"]),
        ],
        [typed("total_in", T.FLOAT, []), typed("row_t", T.FLOAT, [None])],
        [typed("total_out", T.FLOAT, []), typed("prefix_t", T.FLOAT, [None])],
        name="outer",
    )
    main = graph(
        [_scan(["t0", "m"], ["total", "prefixes"], outer, num_scan_inputs=1)],
        [typed("t0", T.FLOAT, []), typed("m", T.FLOAT, ["R", "C"]), typed("scale", T.FLOAT, [])],
        [typed("total", T.FLOAT, []), typed("prefixes", T.FLOAT, ["R", "C"])],
    )
    runs = [
        {"t0": np.array(0.5, np.float32), "m": _f32(r, c), "scale": np.array(2, np.float32)}
        for r, c in [(3, 4), (4, 1)]
    ]
    no_rows = {"t0": np.array(0.5, np.float32), "m": _f32(0, 4), "scale": np.array(2, np.float32)}
    # No row ran, so nothing fixes the row length: its dim is 0 (see ovgraph.empty_dims).
    runs.insert(1, _zero_length(no_rows, ["t0"], [(0, 0)]))
    empty_rows = dict(no_rows, m=_f32(2, 0))  # two inner scans of length 0
    runs.insert(2, _zero_length(empty_rows, ["t0"], [(2, 0)]))
    return model(main), runs


@scenario
def scan_inside_loop_and_loop_inside_scan():
    """A Loop whose body runs a Scan, and a Scan whose body runs a Loop."""
    loop_in_scan = graph(
        [node("Add", ["k_acc_in", "x_t"], ["k_acc_out"]), node("Identity", ["k_cond"], ["k_keep"])],
        [typed("k", T.INT64, []), typed("k_cond", T.BOOL, []), typed("k_acc_in", T.FLOAT, [2])],
        [typed("k_keep", T.BOOL, []), typed("k_acc_out", T.FLOAT, [2])],
        name="loop_in_scan",
    )
    scan_body = graph(
        [
            node("Loop", ["reps", "", "s_in"], ["s_out"], body=loop_in_scan),
            node("Identity", ["s_out"], ["y_t"]),
        ],
        [typed("s_in", T.FLOAT, [2]), typed("x_t", T.FLOAT, [2])],
        [typed("s_out", T.FLOAT, [2]), typed("y_t", T.FLOAT, [2])],
        name="scan_body",
    )
    loop_body = graph(
        [
            _scan(["acc_in", "x"], ["acc_out", "ys"], scan_body, num_scan_inputs=1),
            node("ReduceSum", ["ys"], ["ys_sum"], keepdims=0),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("i", T.INT64, []), typed("cond_in", T.BOOL, []), typed("acc_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("acc_out", T.FLOAT, [2]), typed("ys_sum", T.FLOAT, [])],
        name="loop_body",
    )
    main = graph(
        [node("Loop", ["M", "", "acc0"], ["acc", "sums"], body=loop_body)],
        [
            typed("M", T.INT64, []),
            typed("acc0", T.FLOAT, [2]),
            typed("x", T.FLOAT, ["T", 2]),
            typed("reps", T.INT64, []),
        ],
        [typed("acc", T.FLOAT, [2]), typed("sums", T.FLOAT, [None])],
    )
    runs = [
        {
            "M": np.array(m, np.int64),
            "acc0": _f32(2),
            "x": _f32(t, 2),
            "reps": np.array(r, np.int64),
        }
        for m, t, r in [(3, 4, 2), (0, 3, 1), (2, 2, 0)]
    ]
    empty = {
        "M": np.array(2, np.int64),
        "acc0": _f32(2),
        "x": _f32(0, 2),
        "reps": np.array(1, np.int64),
    }
    runs.insert(1, _zero_length(empty, ["acc0"], [(2,)]))  # two Scans of length 0: sums 0
    return model(main), runs


@scenario
def if_inside_scan():
    """An If in the Scan body chooses by the sign of the element."""
    then_branch = graph(
        [node("Add", ["s_in", "x_t"], ["t"])], [], [typed("t", T.FLOAT, [])], name="then"
    )
    else_branch = graph(
        [node("Sub", ["s_in", "x_t"], ["e"])], [], [typed("e", T.FLOAT, [])], name="else"
    )
    body = graph(
        [
            node("Greater", ["x_t", "zero"], ["positive"]),
            node("If", ["positive"], ["s_out"], then_branch=then_branch, else_branch=else_branch),
            node("Identity", ["s_out"], ["y_t"]),
        ],
        [typed("s_in", T.FLOAT, []), typed("x_t", T.FLOAT, [])],
        [typed("s_out", T.FLOAT, []), typed("y_t", T.FLOAT, [])],
        [const("zero", 0.0)],
        name="body",
    )
    main = graph(
        [_scan(["s0", "x"], ["s", "ys"], body, num_scan_inputs=1)],
        [typed("s0", T.FLOAT, []), typed("x", T.FLOAT, ["T"])],
        [typed("s", T.FLOAT, []), typed("ys", T.FLOAT, ["T"])],
    )
    runs = [{"s0": np.array(1, np.float32), "x": _f32(t)} for t in (6, 3)]
    runs.insert(1, _zero_length({"s0": np.array(1, np.float32), "x": _f32(0)}, ["s0"], [(0,)]))
    return model(main), runs


def _scan8(with_lengths: bool, directions=None, static: bool = False):
    """s += x_t, y_t = s * x_t over x [B, T, 2]; `static`: declared [3, 15, 2], with lengths
    from 1 to 15 (onnxruntime refuses a length 0: "Invalid entries in sequence_lens")."""
    body = graph(
        [node("Add", ["s_in", "x_t"], ["s_out"]), node("Mul", ["s_out", "x_t"], ["y_t"])],
        [typed("s_in", T.FLOAT, [2]), typed("x_t", T.FLOAT, [2])],
        [typed("s_out", T.FLOAT, [2]), typed("y_t", T.FLOAT, [2])],
        name="body",
    )
    attrs = {"directions": directions} if directions else {}
    inputs = ["lens" if with_lengths else "", "s0", "x"]
    batch_dim, steps_dim = (3, 15) if static else ("B", "T")
    main_inputs = [
        typed("s0", T.FLOAT, [batch_dim, 2]),
        typed("x", T.FLOAT, [batch_dim, steps_dim, 2]),
    ]
    if with_lengths:
        main_inputs.insert(0, typed("lens", T.INT64, [batch_dim]))
    main = graph(
        [node("Scan", inputs, ["s", "ys"], body=body, num_scan_inputs=1, **attrs)],
        main_inputs,
        [typed("s", T.FLOAT, [batch_dim, 2]), typed("ys", T.FLOAT, [batch_dim, steps_dim, 2])],
    )
    made = onnx.helper.make_model(main, opset_imports=[onnx.helper.make_opsetid("", 8)])
    made.ir_version = 10
    shapes = [(3, 5, [5, 2, 1]), (2, 4, [1, 4]), (0, 3, []), (2, 0, [0, 0]), (1, 6, [6])]
    if static:
        lengths = [[15, 15, 15], [15, 3, 1], [1, 2, 3], [14, 15, 15], [7, 1, 15], [15, 15, 15]]
        shapes = [(3, 15, lens) for lens in lengths]
    runs = []
    for batch, steps, lens in shapes:
        feeds = {"s0": _f32(batch, 2), "x": _f32(batch, steps, 2)}
        if with_lengths:
            feeds["lens"] = np.array(lens, np.int64).reshape(batch)
        if batch == 0 or steps == 0:  # onnxruntime fails on these
            feeds = _zero_length(feeds, ["s0"], [(batch, steps, 2)])
        runs.append(feeds)
    return made, runs


@scenario
def scan8_without_sequence_lens():
    return _scan8(False)


@scenario
def scan8_sequence_lens_variable_lengths():
    """Scan-8 with per-entry lengths: outputs zero-padded, states after each entry's length."""
    return _scan8(True)


@scenario
def scan8_sequence_lens_reverse():
    """Scan-8, reverse direction within each entry's own length."""
    return _scan8(True, directions=[1])


@scenario
def scan8_sequence_lens_static_shapes():
    """Scan-8 of static shapes [3, 15, 2], lengths below 15: at `max` the entry's scan is
    unrolled x16 and its input, cut to the entry's length (of bounds [0, 15]), padded to a
    multiple of 16; OpenVINO bounded the pad wrongly and every run with a length below 14 failed
    ("Can not clone with new dims", issue 20)."""
    return _scan8(True, static=True)


@scenario
def scan_state_is_the_previous_element():
    """state <- x_t (a view of the sliced input); the scan output reads the previous element.
    The CPU plugin wrote the next slice into the shared buffer first (ov-loops copies it)."""
    body = graph(
        [node("Identity", ["x_t"], ["s_out"]), node("Identity", ["s_in"], ["previous"])],
        [typed("s_in", T.FLOAT, [2]), typed("x_t", T.FLOAT, [2])],
        [typed("s_out", T.FLOAT, [2]), typed("previous", T.FLOAT, [2])],
        name="body",
    )
    main = graph(
        [_scan(["s0", "x"], ["s", "ys"], body, num_scan_inputs=1)],
        [typed("s0", T.FLOAT, [2]), typed("x", T.FLOAT, ["T", 2])],
        [typed("s", T.FLOAT, [2]), typed("ys", T.FLOAT, ["T", 2])],
    )
    return model(main), [{"s0": _f32(2), "x": _f32(t, 2)} for t in (4, 1, 6)]


def _two_states_one_input(body_nodes, lengths):
    """A Scan with states a, b and scan input x (all [2] per step) whose body computes
    a_out, b_out and the scan output y by `body_nodes`; runs of the given lengths."""
    body = graph(
        body_nodes,
        [typed("a_in", T.FLOAT, [2]), typed("b_in", T.FLOAT, [2]), typed("x_t", T.FLOAT, [2])],
        [typed("a_out", T.FLOAT, [2]), typed("b_out", T.FLOAT, [2]), typed("y", T.FLOAT, [2])],
        name="body",
    )
    main = graph(
        [_scan(["a0", "b0", "x"], ["a", "b", "ys"], body, num_scan_inputs=1)],
        [typed("a0", T.FLOAT, [2]), typed("b0", T.FLOAT, [2]), typed("x", T.FLOAT, ["T", 2])],
        [typed("a", T.FLOAT, [2]), typed("b", T.FLOAT, [2]), typed("ys", T.FLOAT, ["T", 2])],
    )
    return model(main), [{"a0": _f32(2), "b0": _f32(2), "x": _f32(t, 2)} for t in lengths]


@scenario
def scan_swapped_states_and_unread_input():
    """Two states swap each step; the scan input is never read (its Parameter is dropped by
    the frontend, and still drives the trip count)."""
    swap = [
        node("Identity", ["b_in"], ["a_out"]),
        node("Identity", ["a_in"], ["b_out"]),
        node("Identity", ["a_in"], ["y"]),
    ]
    return _two_states_one_input(swap, (3, 4, 1))


@scenario
def scan_state_overwritten_by_an_unchanged_one():
    """b <- a, a unchanged, ys = a + x_t (hypothesis found it). Optimised, a becomes invariant,
    b's Parameter is read by nothing and the unrolled body's iteration Parameter came last:
    OpenVINO dropped the unread Parameter without moving current_iteration's index and the
    unrolled loop stopped after 1 of its 3 iterations (`IterationParameterFirst`)."""
    overwrite = [
        node("Add", ["a_in", "x_t"], ["y"]),
        node("Identity", ["a_in"], ["a_out"]),
        node("Identity", ["a_in"], ["b_out"]),
    ]
    return _two_states_one_input(overwrite, (3, 17, 1))
