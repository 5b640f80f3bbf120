"""A seeded sweep of the loops the optimisations rewrite (appended carried values stacked,
sliced MatMuls hoisted, bodies unrolled with masked copies), converted at `none` and at `max`
and run on one compiled model each against the ONNX reference: trip counts 0, 1, around the
unrolling factor and beyond it, early exits, false initial conditions, zero iterations after
runs with some (and in a loop body, at its first iteration), and Scan-8 lengths from 0 to the
static length.

It found (issue 20, on the main of then): at `max` a stacked accumulator came back as its
initial value twice after zero iterations, and an unrolled scan whose input is cut to a
run-time length inside another loop (a Scan-8 entry, a prefix x[:i+1]) failed to infer.
About 30 s on the 2-core VM (16 conversions and compilations, 8 at max).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tests.harness import assert_matches_onnxruntime, reference_oracle
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

LEVELS = ("none", "max")
K = 16  # the unrolling factor these small bodies get (unroll.MAX_FACTOR)
D = 3
SEED = 20


def _f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _controls(rng: np.random.Generator) -> list[tuple[int, bool, int]]:
    """(trip count, initial condition, last iteration the body lets run): zero iterations on a
    fresh model and after runs with some, the counts around K, early exits inside a chunk and
    at its end, a false initial condition; then six drawn at random."""
    fixed = [(0, True, 99), (K + 1, True, 99), (0, True, 99), (1, True, 99), (K, True, 99)]
    fixed += [(K - 1, True, 99), (2 * K + 3, True, K + 2), (9, True, 0), (5, False, 99)]
    drawn = [
        (int(rng.integers(0, 2 * K + 4)), bool(rng.random() < 0.8), int(rng.integers(-1, K + 3)))
        for _ in range(6)
    ]
    return fixed + drawn + [(0, True, 99)]


def _appending_loop(rng: np.random.Generator, axis: int, constant_trip: int | None):
    """h = tanh(h W + xs[i % 5]); acc = Concat(acc, h) along `axis` (h transposed for axis 1),
    ys the stack of 2h; a trip count M (run-time, or `constant_trip`), initial condition c0,
    and the body's condition i < k."""
    acc = [None, D] if axis == 0 else [D, None]
    nodes = [
        node("Mod", ["i", "five"], ["j"]),
        node("Gather", ["xs", "j"], ["x_i"], axis=0),
        node("MatMul", ["h_in", "W"], ["hw"]),
        node("Add", ["hw", "x_i"], ["pre"]),
        node("Tanh", ["pre"], ["h_out"]),
        node("Transpose", ["h_out"], ["part"], perm=[axis, 1 - axis]),
        node("Concat", ["acc_in", "part"], ["acc_out"], axis=axis),
        node("Add", ["h_out", "h_out"], ["y"]),
        node("Less", ["i", "k"], ["go"]),
    ]
    body = loop_body(
        nodes,
        [typed("h_in", T.FLOAT, [1, D]), typed("acc_in", T.FLOAT, acc)],
        [
            typed("go", T.BOOL, []),
            typed("h_out", T.FLOAT, [1, D]),
            typed("acc_out", T.FLOAT, acc),
            typed("y", T.FLOAT, [1, D]),
        ],
        [const("five", 5, np.int64)],
    )
    inputs = [typed("c0", T.BOOL, []), typed("k", T.INT64, []), typed("xs", T.FLOAT, [5, D])]
    inputs += [typed("h0", T.FLOAT, [1, D]), typed("acc0", T.FLOAT, acc)]
    initializers = [const("W", np.eye(D) * 0.5 + 0.1)]
    if constant_trip is None:
        inputs.insert(0, typed("M", T.INT64, []))
    else:
        initializers.append(const("M", constant_trip, np.int64))
    main = graph(
        [node("Loop", ["M", "c0", "h0", "acc0"], ["h", "acc", "ys"], body=body)],
        inputs,
        [
            typed("h", T.FLOAT, [1, D]),
            typed("acc", T.FLOAT, acc),
            typed("ys", T.FLOAT, [None, 1, D]),
        ],
        initializers,
    )
    runs = []
    for m, c0, k in _controls(rng):
        feeds = {"c0": np.array(c0), "k": np.array(k, np.int64), "xs": _f32(rng, 5, D)}
        feeds |= {"h0": _f32(rng, 1, D), "acc0": _f32(rng, *([2, D] if axis == 0 else [D, 2]))}
        if constant_trip is None:
            feeds["M"] = np.array(m, np.int64)
        runs.append(feeds)
    return model(main), runs


def _appending_in_a_loop(rng: np.random.Generator):
    """For i < M: an inner Loop of i iterations (none at i = 0) appends x * j to acc (from acc0)
    and stacks 2 x j; the outer loop carries s += sum(acc) + sum(ys) and stacks that sum."""
    inner = loop_body(
        [
            node("Cast", ["j"], ["fj"], to=T.FLOAT),
            node("Mul", ["x", "fj"], ["xj"]),
            node("Reshape", ["xj", "row"], ["part"]),
            node("Concat", ["acc_in", "part"], ["acc_out"], axis=0),
            node("Add", ["xj", "xj"], ["y"]),
            node("Identity", ["inner_cond"], ["inner_go"]),
        ],
        [typed("acc_in", T.FLOAT, [None, D])],
        [
            typed("inner_go", T.BOOL, []),
            typed("acc_out", T.FLOAT, [None, D]),
            typed("y", T.FLOAT, [D]),
        ],
        [const("row", [1, D], np.int64)],
        iteration="j",
        condition="inner_cond",
    )
    body = loop_body(
        [
            node("Loop", ["i", "", "acc0"], ["acc", "ys"], body=inner),
            node("ReduceSum", ["acc"], ["acc_sum"], keepdims=0),
            node("ReduceSum", ["ys"], ["ys_sum"], keepdims=0),
            node("Add", ["acc_sum", "ys_sum"], ["o"]),
            node("Add", ["s_in", "o"], ["s_out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [typed("s_in", T.FLOAT, [])],
        [typed("go", T.BOOL, []), typed("s_out", T.FLOAT, []), typed("o", T.FLOAT, [])],
    )
    main = graph(
        [node("Loop", ["M", "c0", "s0"], ["s", "os"], body=body)],
        [
            typed("M", T.INT64, []),
            typed("c0", T.BOOL, []),
            typed("s0", T.FLOAT, []),
            typed("x", T.FLOAT, [D]),
            typed("acc0", T.FLOAT, [2, D]),
        ],
        [typed("s", T.FLOAT, []), typed("os", T.FLOAT, [None])],
    )
    runs = [
        {"M": np.array(m, np.int64), "c0": np.array(c0), "s0": np.array(0.5, np.float32)}
        | {"x": _f32(rng, D), "acc0": _f32(rng, 2, D)}
        for m, c0, _ in _controls(rng)
    ]
    return model(main, 16), runs


def _scan8(rng: np.random.Generator, batch: int, steps: int):
    """Scan-8 over x [batch, steps, D] (static) with sequence_lens: s += x_t U (a MatMul to
    hoist), y_t = s * x_t; lengths from 0 to `steps`."""
    body = graph(
        [
            node("MatMul", ["x_t", "U"], ["xu"]),
            node("Add", ["xu", "s_in"], ["s_out"]),
            node("Mul", ["s_out", "x_t"], ["y_t"]),
        ],
        [typed("s_in", T.FLOAT, [D]), typed("x_t", T.FLOAT, [D])],
        [typed("s_out", T.FLOAT, [D]), typed("y_t", T.FLOAT, [D])],
        [const("U", np.arange(D * D).reshape(D, D) / 10.0)],
        name="body",
    )
    main = graph(
        [node("Scan", ["lens", "s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1)],
        [
            typed("lens", T.INT64, [batch]),
            typed("s0", T.FLOAT, [batch, D]),
            typed("x", T.FLOAT, [batch, steps, D]),
        ],
        [typed("s", T.FLOAT, [batch, D]), typed("ys", T.FLOAT, [batch, steps, D])],
    )
    made = onnx.helper.make_model(main, opset_imports=[onnx.helper.make_opsetid("", 8)])
    made.ir_version = 10
    lengths = [[steps] * batch, [0] * batch, [1] * batch, [steps - 1] * batch]
    lengths += [list(rng.integers(0, steps + 1, batch)) for _ in range(4)]
    runs = [
        {
            "lens": np.array(lens, np.int64),
            "s0": _f32(rng, batch, D),
            "x": _f32(rng, batch, steps, D),
        }
        for lens in lengths
    ]
    return made, runs


def _prefix_scans(rng: np.random.Generator, length: int):
    """For i < M: an inner Scan over xs[:i + 1] (xs of static `length`: the prefix's length is
    bounded, not known), s += r, y = s * r; the loop stacks s + sum(ys)."""
    inner = graph(
        [node("Add", ["s_in", "r"], ["s_out"]), node("Mul", ["s_out", "r"], ["y"])],
        [typed("s_in", T.FLOAT, [D]), typed("r", T.FLOAT, [D])],
        [typed("s_out", T.FLOAT, [D]), typed("y", T.FLOAT, [D])],
        name="inner",
    )
    body = loop_body(
        [
            node("Add", ["i", "one"], ["stop"]),
            node("Unsqueeze", ["stop", "axis0"], ["ends"]),
            node("Slice", ["xs", "axis0", "ends"], ["prefix"]),
            node("Scan", ["s0", "prefix"], ["s", "ys"], body=inner, num_scan_inputs=1),
            node("ReduceSum", ["ys", "axis0"], ["total"], keepdims=0),
            node("Add", ["s", "total"], ["out"]),
            node("Identity", ["cond_in"], ["go"]),
        ],
        [],
        [typed("go", T.BOOL, []), typed("out", T.FLOAT, [D])],
        [const("one", 1, np.int64), const("axis0", [0], np.int64), const("s0", np.zeros(D))],
    )
    main = graph(
        [node("Loop", ["M", "c0"], ["outs"], body=body)],
        [typed("M", T.INT64, []), typed("c0", T.BOOL, []), typed("xs", T.FLOAT, [length, D])],
        [typed("outs", T.FLOAT, [None, D])],
    )
    controls = [(length, True), (3, True), (0, True), (1, True), (length, False), (2, True)]
    runs = [
        {"M": np.array(m, np.int64), "c0": np.array(c0), "xs": _f32(rng, length, D)}
        for m, c0 in controls
    ]
    return model(main, 16), runs


STACKED, UNROLLED, HOISTED = (
    "stacked 1 appended carried value(s)",
    "unrolled x16",
    "hoisted 1 MatMul",
)
# name: (builder of (model, runs) from a seeded generator, what `max` must have done to it)
CASES = {
    "appended_axis0_runtime_trip": (lambda rng: _appending_loop(rng, 0, None), STACKED, UNROLLED),
    "appended_axis1_runtime_trip": (lambda rng: _appending_loop(rng, 1, None), STACKED, UNROLLED),
    "appended_constant_trip_17": (lambda rng: _appending_loop(rng, 0, K + 1), STACKED, UNROLLED),
    "appended_in_a_loop_body": (_appending_in_a_loop, STACKED, UNROLLED),
    "scan8_lengths_3x15": (lambda rng: _scan8(rng, 3, 15), HOISTED, UNROLLED),
    "scan8_lengths_2x17": (lambda rng: _scan8(rng, 2, 17), HOISTED, UNROLLED),
    "prefix_scans_15": (lambda rng: _prefix_scans(rng, 15), UNROLLED),
    "prefix_scans_16": (lambda rng: _prefix_scans(rng, 16), UNROLLED),
}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", list(CASES))
def test_sweep_matches_the_onnx_reference(case: str, level: str, tmp_path):
    build, *rewritten = CASES[case]
    made, runs = build(np.random.default_rng(SEED))
    conversion = assert_matches_onnxruntime(
        made, runs, tmp_path, rtol=1e-4, atol=1e-5, oracle=reference_oracle, optimize=level
    )
    done = {step for loop in conversion.loops for step in loop.optimizations}
    assert set(rewritten) <= done if level == "max" else not done  # the sweep is not vacuous
