"""Models written with onnxscript's @script() (run in /work/exporters/onnxscript-venv).

Python `for`, `while`, `break` and nested loops in an @script() function become ONNX Loops.
Expected outputs come from onnxscript's eager mode (calling the function on numpy arrays: the
Python control flow runs in Python, each op on its own), and are checked against a plain numpy
version of the same computation written here.
"""

# no `from __future__ import annotations` here: onnxscript reads the annotations
import sys
from pathlib import Path

import numpy as np
import onnxscript
from onnxscript import BOOL, FLOAT, INT64, script
from onnxscript import opset18 as op

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_io import Registry, rand  # noqa: E402

SCRIPT = "make/onnxscript_models.py"
EXPORTER = f"onnxscript {onnxscript.__version__}"
FRAMEWORK = f"onnxscript {onnxscript.__version__} eager mode"
model = Registry(SCRIPT, EXPORTER, FRAMEWORK)

# typed shapes of the functions' inputs and outputs; strings are symbolic dims
F_N = FLOAT["N"]
F_N3 = FLOAT["N", 3]
F_NM = FLOAT["N", "M"]
F_TB = FLOAT["T", "B"]
F_TB4 = FLOAT["T", "B", 4]
F_B6 = FLOAT["B", 6]
F_46 = FLOAT[4, 6]
F_66 = FLOAT[6, 6]
B_M = BOOL["M"]


def export(
    name, function, sets, reference, *, exercises, time_axis=None, rnn_like=False, notes=None
):
    """to_model_proto of `function`; expected = eager outputs, checked against `reference`."""
    proto = function.to_model_proto()
    in_names = [i.name for i in proto.graph.input]
    out_names = [o.name for o in proto.graph.output]
    results = []
    for inputs in sets:
        outs = function(*[inputs[k] for k in in_names])
        outs = [outs] if len(out_names) == 1 else list(outs)
        outs = {k: np.asarray(v) for k, v in zip(out_names, outs)}
        for k, want in zip(out_names, reference(*[inputs[k] for k in in_names])):
            np.testing.assert_allclose(outs[k], want, rtol=1e-5, atol=1e-5, err_msg=f"{name}:{k}")
        results.append(outs)
    about = {"time_axis": time_axis, "rnn_like": rnn_like, "notes": notes}
    return model.save(name, proto, sets, results, exercises, **about)


@script()
def decay_for(x: F_N3, n: INT64) -> F_N3:
    y = x
    for i in range(n):
        y = y * 0.9 + op.CastLike(i, y)
    return y


@model
def onnxscript_for_range_count():
    def ref(x, n):
        y = x.copy()
        for i in range(int(n)):
            y = y * np.float32(0.9) + np.float32(i)
        return [y]

    sets = [
        {"x": rand(1, 2, 3), "n": np.array(5, np.int64)},
        {"x": rand(2, 4, 3), "n": np.array(0, np.int64)},
    ]
    return export(
        "onnxscript_for_range_count",
        decay_for,
        sets,
        ref,
        exercises="@script for i in range(n) with n an input (0 in set 2), the counter used",
    )


@script()
def rnn_for(x: F_TB4, h0: F_B6, w: F_46, u: F_66) -> F_B6:
    h = h0
    steps = op.Shape(x, start=0, end=1)
    for t in range(op.Squeeze(steps)):
        xt = op.Gather(x, t, axis=0)
        h = op.Tanh(op.MatMul(xt, w) + op.MatMul(h, u))
    return h


@model
def onnxscript_rnn_over_time():
    w, u = rand(10, 4, 6, scale=0.5), rand(11, 6, 6, scale=0.4)

    def ref(x, h, w, u):
        for t in range(x.shape[0]):
            h = np.tanh(x[t] @ w + h @ u)
        return [h]

    sets = [
        {"x": rand(12, 5, 2, 4), "h0": rand(13, 2, 6), "w": w, "u": u},
        {"x": rand(14, 9, 3, 4), "h0": rand(15, 3, 6), "w": w, "u": u},
    ]
    return export(
        "onnxscript_rnn_over_time",
        rnn_for,
        sets,
        ref,
        exercises="@script RNN: for t in range(T) with T from Shape(x), Gather of step t, weights "
        "as inputs, symbolic T and B",
        time_axis={"x": 0},
        rnn_like=True,
    )


@script()
def collatz_while(n: INT64) -> INT64:
    steps = op.Constant(value_int=0)
    cond = n > 1
    while cond:
        odd = op.Mod(n, op.Constant(value_int=2)) == 1
        n = op.Where(odd, n * 3 + 1, op.Div(n, op.Constant(value_int=2)))
        steps = steps + 1
        cond = n > 1
    return steps


@model
def onnxscript_while_collatz():
    def ref(n):
        n, steps = int(n), 0
        while n > 1:
            n = 3 * n + 1 if n % 2 else n // 2
            steps += 1
        return [np.array(steps, np.int64)]

    sets = [{"n": np.array(27, np.int64)}, {"n": np.array(1, np.int64)}]
    return export(
        "onnxscript_while_collatz",
        collatz_while,
        sets,
        ref,
        exercises="@script while on a data-dependent condition (Collatz steps; 111 iterations "
        "in set 1, none in set 2)",
    )


@script()
def first_above(x: F_N, limit: FLOAT) -> INT64:
    found = op.Constant(value_int=-1)
    for i in range(op.Squeeze(op.Shape(x))):
        v = op.Gather(x, i)
        hit = v > limit
        found = op.Where(hit, op.CastLike(i, found), found)
        if hit:
            break
    return found


@model
def onnxscript_for_break():
    def ref(x, limit):
        for i, v in enumerate(x):
            if v > limit:
                return [np.array(i, np.int64)]
        return [np.array(-1, np.int64)]

    sets = [
        {"x": rand(20, 9), "limit": np.array(1.0, np.float32)},
        {"x": rand(21, 4, scale=0.1), "limit": np.array(5.0, np.float32)},
    ]
    return export(
        "onnxscript_for_break",
        first_above,
        sets,
        ref,
        exercises="@script for loop with a break (the condition output of the Loop body), "
        "index of the first element above a limit (none in set 2)",
    )


@script()
def nested_for(x: F_N3, n: INT64, m: INT64) -> F_N3:
    y = x
    for i in range(n):
        for j in range(m):
            y = op.Sin(y) + op.CastLike(i * j, y) * 0.1
        y = y * 0.5
    return y


@model
def onnxscript_nested_for():
    def ref(x, n, m):
        y = x.copy()
        for i in range(int(n)):
            for j in range(int(m)):
                y = np.sin(y) + np.float32(i * j) * np.float32(0.1)
            y = y * np.float32(0.5)
        return [y]

    sets = [
        {"x": rand(30, 2, 3), "n": np.array(3, np.int64), "m": np.array(4, np.int64)},
        {"x": rand(31, 5, 3), "n": np.array(2, np.int64), "m": np.array(0, np.int64)},
    ]
    return export(
        "onnxscript_nested_for",
        nested_for,
        sets,
        ref,
        exercises="@script nested for loops, both counts inputs (inner 0 in set 2), the outer "
        "counter read in the inner body",
    )


@script()
def newton_while(a: F_N) -> F_N:
    x = op.CastLike(op.Expand(op.Constant(value_float=1.0), op.Shape(a)), a)
    k = op.Constant(value_int=0)
    go = op.Constant(value=True)
    while go:
        x = (x + a / x) * 0.5
        k = k + 1
        err = op.ReduceMax(op.Abs(x * x - a), keepdims=0)
        go = op.And(err > 1e-4, k < 50)
    return x


@model
def onnxscript_while_newton():
    def ref(a):
        x, k = np.ones_like(a), 0
        while True:
            x = (x + a / x) * np.float32(0.5)
            k += 1
            if not (np.max(np.abs(x * x - a)) > 1e-4 and k < 50):
                return [x]

    sets = [{"a": np.abs(rand(40, 6)) + 0.5}, {"a": np.abs(rand(41, 3)) * 20 + 1}]
    return export(
        "onnxscript_while_newton",
        newton_while,
        sets,
        ref,
        exercises="@script while with a condition recomputed at the end of the body (Newton "
        "square root to tolerance)",
    )


@script()
def scan_like_cumsum(x: F_TB) -> F_TB:
    acc = op.Gather(x, 0, axis=0) * 0.0
    outs = op.SequenceEmpty(dtype=1)
    for t in range(op.Squeeze(op.Shape(x, start=0, end=1))):
        acc = acc * 0.5 + op.Gather(x, t, axis=0)
        outs = op.SequenceInsert(outs, acc)
    return op.ConcatFromSequence(outs, axis=0, new_axis=1)


@model
def onnxscript_sequence_accumulate():
    def ref(x):
        acc, outs = np.zeros_like(x[0]), []
        for t in range(x.shape[0]):
            acc = acc * np.float32(0.5) + x[t]
            outs.append(acc)
        return [np.stack(outs, 0)]

    sets = [{"x": rand(50, 5, 3)}, {"x": rand(51, 8, 2)}]
    return export(
        "onnxscript_sequence_accumulate",
        scan_like_cumsum,
        sets,
        ref,
        exercises="@script loop accumulating a Sequence (SequenceEmpty, SequenceInsert carried, "
        "ConcatFromSequence new_axis after)",
        time_axis={"x": 0},
        rnn_like=True,
    )


@script()
def masked_count(x: F_NM, keep: B_M) -> F_N:
    total = op.ReduceSum(x, op.Constant(value_ints=[1]), keepdims=0) * 0.0
    for j in range(op.Squeeze(op.Shape(keep))):
        if op.Gather(keep, j):  # noqa: SIM108 -- onnxscript has no conditional expressions
            total = total + op.Gather(x, j, axis=1)
        else:
            total = total - 0.5
    return total


@model
def onnxscript_if_in_for():
    def ref(x, keep):
        total = np.zeros(x.shape[0], np.float32)
        for j in range(keep.shape[0]):
            total = total + x[:, j] if keep[j] else total - np.float32(0.5)
        return [total]

    sets = [
        {"x": rand(60, 3, 5), "keep": np.array([1, 0, 1, 1, 0], bool)},
        {"x": rand(61, 2, 2), "keep": np.array([0, 0], bool)},
    ]
    return export(
        "onnxscript_if_in_for",
        masked_count,
        sets,
        ref,
        exercises="@script for loop over columns with an if/else on a bool input (If in Loop)",
    )


if __name__ == "__main__":
    model.main()
