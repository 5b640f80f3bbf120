"""Random small elementwise loop bodies, as Loop and as Scan, against the numpy reference.

The bodies mix the carried values, the current slice of a sequence, an invariant and the
iteration number; outputs may be any of them, so views, passthroughs and swaps all occur. A
plain `acc + x_t * w` body once came out wrong on the CPU plugin while every hand-written
scenario passed: this test looks for the next such case. The oracle is the ONNX reference (itself
checked against onnxruntime on every scenario): onnxruntime 1.31 returns zeros for a Scan state
the body passes through unchanged (`test_onnxruntime_zeroes_passed_through_scan_states`).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness import assert_matches_onnxruntime, reference_oracle
from tests.onnx_builders import T, graph, model, node, typed

OPS = ["Add", "Sub", "Mul", "Max", "Min"]


@st.composite
def bodies(draw):
    carried = draw(st.integers(1, 2))
    pool = [f"c{k}_in" for k in range(carried)] + ["x_t", "w", "fi"]
    vectors = set(pool) - {"fi"}  # values of shape [2]; fi is a scalar
    steps = []
    for index in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(OPS))
        left, right = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        steps.append((op, left, right, f"v{index}"))
        pool.append(f"v{index}")
        if left in vectors or right in vectors:
            vectors.add(f"v{index}")
    # Outputs: [2]-shaped, and not the capture w (a body output may not name an outer value).
    candidates = sorted(vectors - {"w"})
    outputs = [draw(st.sampled_from(candidates)) for _ in range(carried + 1)]
    return carried, steps, outputs


def _nodes(steps):
    return [node(op, [left, right], [out]) for op, left, right, out in steps]


def _loop_model(carried, steps, outputs):
    body = graph(
        [
            node("Gather", ["X", "i"], ["x_t"], axis=0),
            node("Cast", ["i"], ["fi"], to=T.FLOAT),
            *_nodes(steps),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [
            typed("i", T.INT64, []),
            typed("cond_in", T.BOOL, []),
            *[typed(f"c{k}_in", T.FLOAT, [2]) for k in range(carried)],
        ],
        [typed("keep", T.BOOL, []), *[typed(name, T.FLOAT, [2]) for name in outputs]],
        name="body",
    )
    return model(
        graph(
            [
                node(
                    "Loop",
                    ["M", "", *[f"c{k}_0" for k in range(carried)]],
                    [*[f"c{k}" for k in range(carried)], "ys"],
                    body=body,
                )
            ],
            [
                typed("M", T.INT64, []),
                typed("X", T.FLOAT, [None, 2]),
                typed("w", T.FLOAT, [2]),
                *[typed(f"c{k}_0", T.FLOAT, [2]) for k in range(carried)],
            ],
            [
                *[typed(f"c{k}", T.FLOAT, [2]) for k in range(carried)],
                typed("ys", T.FLOAT, [None, 2]),
            ],
        )
    )


def _scan_model(carried, steps, outputs):
    """The same body as a Scan: the iteration number becomes a scanned counter input."""
    body = graph(
        _nodes(steps),
        [
            *[typed(f"c{k}_in", T.FLOAT, [2]) for k in range(carried)],
            typed("x_t", T.FLOAT, [2]),
            typed("fi", T.FLOAT, []),
        ],
        [*[typed(name, T.FLOAT, [2]) for name in outputs]],
        name="body",
    )
    return model(
        graph(
            [
                node(
                    "Scan",
                    [*[f"c{k}_0" for k in range(carried)], "X", "counter"],
                    [*[f"c{k}" for k in range(carried)], "ys"],
                    body=body,
                    num_scan_inputs=2,
                )
            ],
            [
                typed("X", T.FLOAT, [None, 2]),
                typed("counter", T.FLOAT, [None]),
                typed("w", T.FLOAT, [2]),
                *[typed(f"c{k}_0", T.FLOAT, [2]) for k in range(carried)],
            ],
            [
                *[typed(f"c{k}", T.FLOAT, [2]) for k in range(carried)],
                typed("ys", T.FLOAT, [None, 2]),
            ],
        )
    )


def _feeds(carried, steps_count, rng, loop):
    feeds = {
        "X": rng.uniform(-2, 2, (steps_count, 2)).astype(np.float32),
        "w": rng.uniform(-2, 2, 2).astype(np.float32),
    }
    feeds.update({f"c{k}_0": rng.uniform(-2, 2, 2).astype(np.float32) for k in range(carried)})
    if loop:
        feeds["M"] = np.array(steps_count, np.int64)
    else:
        feeds["counter"] = np.arange(steps_count, dtype=np.float32)
    return feeds


@settings(max_examples=40, deadline=None)
@given(body=bodies())
def test_random_loop_bodies(body, tmp_path_factory):
    rng = np.random.default_rng(0)
    runs = [_feeds(body[0], n, rng, loop=True) for n in (3, 0, 5)]
    assert_matches_onnxruntime(
        _loop_model(*body), runs, tmp_path_factory.mktemp("loop"), oracle=reference_oracle
    )


@settings(max_examples=40, deadline=None)
@given(body=bodies())
def test_random_scan_bodies(body, tmp_path_factory):
    rng = np.random.default_rng(1)
    runs = [_feeds(body[0], n, rng, loop=False) for n in (3, 5, 1)]
    assert_matches_onnxruntime(
        _scan_model(*body), runs, tmp_path_factory.mktemp("scan"), oracle=reference_oracle
    )


def test_onnxruntime_zeroes_passed_through_scan_states():
    """Why the oracle above is not onnxruntime: the ONNX spec keeps a passed-through state."""
    import onnxruntime as ort

    from ov_loops.reference.onnx_reference import run_onnx

    made = _scan_model(1, [("Add", "c0_in", "c0_in", "v0")], ["c0_in", "c0_in"])
    feeds = _feeds(1, 3, np.random.default_rng(1), loop=False)
    theirs = ort.InferenceSession(made.SerializeToString()).run(None, feeds)
    ours = run_onnx(made, feeds)
    np.testing.assert_array_equal(ours[0], feeds["c0_0"])
    assert not np.array_equal(theirs[0], feeds["c0_0"]), "onnxruntime fixed it: use it again"
