"""JAX / flax models exported by jax2onnx (run in /work/exporters/jax-venv; see README.md).

Each function below builds one model as a user would write it, exports it with symbolic dims
named in the input specs ("B", "T", ...), and saves it with jax.jit's outputs as the expected
values. flax.linen's RNN/Bidirectional/scan need jnp.shape unpatched while jax2onnx traces
(flax's axes_scan builds ShapedArrays from jnp.shape, which jax2onnx replaces by a symbolic
one); jax2onnx's own linen RNN test cases do the same (`_use_original_jnp_shape`).
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn
from flax import nnx
from jax2onnx import to_onnx
from jax2onnx.plugins.flax.test_utils import _use_original_jnp_shape

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_io import Registry, rand  # noqa: E402

SCRIPT = "make/jax_models.py"
EXPORTER = f"jax2onnx {version('jax2onnx')}"
FRAMEWORK = f"jax {jax.__version__}, flax {version('flax')}"
model = Registry(SCRIPT, EXPORTER, FRAMEWORK)


def export(
    name,
    fn,
    specs,
    sets,
    *,
    exercises,
    input_names,
    output_names,
    time_axis=None,
    rnn_like=False,
    notes=None,
    double=False,
):
    """Export `fn` (specs: shapes with symbolic names); expected outputs from jax.jit(fn).
    `double`: in float64 (jax x64, jax2onnx's enable_double_precision)."""
    with jax.enable_x64(double):
        proto = to_onnx(
            fn,
            specs,
            model_name=name,
            input_names=input_names,
            output_names=output_names,
            enable_double_precision=double,
        )
        jitted = jax.jit(fn)
        results = []
        for inputs in sets:
            outs = jitted(*[jnp.asarray(inputs[k]) for k in input_names])
            outs = jax.tree_util.tree_leaves(outs)
            assert len(outs) == len(output_names), (name, len(outs))
            results.append({k: np.asarray(v) for k, v in zip(output_names, outs)})
    about = {"time_axis": time_axis, "rnn_like": rnn_like, "notes": notes}
    return model.save(name, proto, sets, results, exercises, **about)


def linen(module, params, call=None):
    """A plain function of the inputs applying a linen module (params closed over)."""

    def fn(*args):
        with _use_original_jnp_shape():
            if call is None:
                return module.apply(params, *args)
            return call(module, params, *args)

    return fn


# ---------------------------------------------------------------- flax.linen nn.RNN


def _linen_rnn(
    name, cell, carry_in, exercises, hidden=8, features=4, return_carry=False, lstm=False
):
    rnn = nn.RNN(cell, return_carry=return_carry)
    x = rand(0, 2, 5, features)
    params = rnn.init(jax.random.PRNGKey(0), jnp.asarray(x))
    x2 = rand(1, 3, 7, features)
    if carry_in:
        if lstm:
            sets = [
                {"x": x, "c0": rand(2, 2, hidden, scale=0.5), "h0": rand(3, 2, hidden, scale=0.5)},
                {"x": x2, "c0": rand(4, 3, hidden, scale=0.5), "h0": rand(5, 3, hidden, scale=0.5)},
            ]
            fn = linen(rnn, params, lambda m, p, x, c, h: m.apply(p, x, initial_carry=(c, h)))
            specs, names = [("B", "T", features), ("B", hidden), ("B", hidden)], ["x", "c0", "h0"]
        else:
            sets = [
                {"x": x, "h0": rand(2, 2, hidden, scale=0.5)},
                {"x": x2, "h0": rand(4, 3, hidden, scale=0.5)},
            ]
            fn = linen(rnn, params, lambda m, p, x, h: m.apply(p, x, initial_carry=h))
            specs, names = [("B", "T", features), ("B", hidden)], ["x", "h0"]
    elif lstm:
        # nn.RNN's own initialize_carry splits a PRNG key (random_split, which jax2onnx cannot
        # export): build the zero carry from x's symbolic batch instead, as a user would
        sets = [{"x": x}, {"x": x2}]

        def call(m, p, x):
            zeros = jnp.zeros((x.shape[0], hidden), x.dtype)
            return m.apply(p, x, initial_carry=(zeros, zeros))

        fn = linen(rnn, params, call)
        specs, names = [("B", "T", features)], ["x"]
    else:
        sets = [{"x": x}, {"x": x2}]
        fn = linen(rnn, params)
        specs, names = [("B", "T", features)], ["x"]
    outs = ["y"]
    if return_carry:
        outs = ["c", "h", "y"] if lstm else ["h", "y"]
    return export(
        name,
        fn,
        specs,
        sets,
        exercises=exercises,
        input_names=names,
        output_names=outs,
        time_axis={"x": 1},
        rnn_like=True,
    )


@model
def jax_linen_gru_carry_in():
    return _linen_rnn(
        "jax_linen_gru_carry_in",
        nn.GRUCell(features=8),
        True,
        "flax.linen nn.RNN(GRUCell), initial carry h0 a graph input, symbolic B and T",
    )


@model
def jax_linen_gru_carry_init():
    return _linen_rnn(
        "jax_linen_gru_carry_init",
        nn.GRUCell(features=8),
        False,
        "flax.linen nn.RNN(GRUCell), zero carry built inside from the symbolic batch B",
    )


@model
def jax_linen_lstm_carry_in():
    return _linen_rnn(
        "jax_linen_lstm_carry_in",
        nn.LSTMCell(features=8),
        True,
        "flax.linen nn.RNN(LSTMCell), (c0, h0) graph inputs, return_carry",
        return_carry=True,
        lstm=True,
    )


@model
def jax_linen_lstm_carry_init():
    return _linen_rnn(
        "jax_linen_lstm_carry_init",
        nn.LSTMCell(features=8),
        False,
        "flax.linen nn.RNN(LSTMCell), carry initialised inside, returns the final carry too",
        return_carry=True,
        lstm=True,
    )


@model
def jax_linen_simple_carry_in():
    return _linen_rnn(
        "jax_linen_simple_carry_in",
        nn.SimpleCell(features=8),
        True,
        "flax.linen nn.RNN(SimpleCell), carry a graph input",
    )


@model
def jax_linen_simple_carry_init():
    return _linen_rnn(
        "jax_linen_simple_carry_init",
        nn.SimpleCell(features=8),
        False,
        "flax.linen nn.RNN(SimpleCell), carry initialised inside",
    )


@model
def jax_linen_mgu_carry_init():
    return _linen_rnn(
        "jax_linen_mgu_carry_init",
        nn.MGUCell(features=8),
        False,
        "flax.linen nn.RNN(MGUCell) (minimal gated unit), carry initialised inside",
    )


@model
def jax_linen_optimized_lstm():
    return _linen_rnn(
        "jax_linen_optimized_lstm",
        nn.OptimizedLSTMCell(features=8),
        False,
        "flax.linen nn.RNN(OptimizedLSTMCell): fused gate matmuls, "
        "zero carry from the symbolic batch",
        lstm=True,
    )


class StackedRNN(nn.Module):
    """Two RNN layers (GRU then LSTM) and a dense head, as a user stacks them."""

    @nn.compact
    def __call__(self, x):
        x = nn.RNN(nn.GRUCell(features=8))(x)
        zeros = jnp.zeros((x.shape[0], 6), x.dtype)
        x = nn.RNN(nn.LSTMCell(features=6))(x, initial_carry=(zeros, zeros))
        return nn.Dense(3)(x)


@model
def jax_linen_stacked_gru_lstm():
    m = StackedRNN()
    x, x2 = rand(10, 2, 6, 4), rand(11, 1, 9, 4)
    params = m.init(jax.random.PRNGKey(1), jnp.asarray(x))
    return export(
        "jax_linen_stacked_gru_lstm",
        linen(m, params),
        [("B", "T", 4)],
        [{"x": x}, {"x": x2}],
        exercises="two stacked flax.linen RNNs (GRU -> LSTM) + Dense: two time Loops in sequence",
        input_names=["x"],
        output_names=["y"],
        time_axis={"x": 1},
        rnn_like=True,
    )


@model
def jax_linen_bidirectional_gru():
    m = nn.Bidirectional(nn.RNN(nn.GRUCell(features=6)), nn.RNN(nn.GRUCell(features=6)))
    x, x2 = rand(20, 2, 5, 4), rand(21, 3, 8, 4)
    params = m.init(jax.random.PRNGKey(2), jnp.asarray(x))
    return export(
        "jax_linen_bidirectional_gru",
        linen(m, params),
        [("B", "T", 4)],
        [{"x": x}, {"x": x2}],
        exercises="flax.linen Bidirectional(GRU, GRU): a forward and a reversed time loop, concat",
        input_names=["x"],
        output_names=["y"],
        time_axis=None,
        rnn_like=True,
        notes="bidirectional: chunked streaming is not meaningful (the backward pass)",
    )


def _seq_lengths(name, static_batch):
    rnn = nn.RNN(nn.GRUCell(features=8), return_carry=True)
    x = rand(30, 3, 6, 4)
    params = rnn.init(jax.random.PRNGKey(3), jnp.asarray(x))
    fn = linen(rnn, params, lambda m, p, x, n: m.apply(p, x, seq_lengths=n))
    sets = [{"x": x, "lengths": np.array([6, 3, 1], np.int32)}]
    b, t = jax.export.symbolic_shape("B, T")
    if static_batch:
        b = 3
        sets.append({"x": rand(31, 3, 4, 4), "lengths": np.array([2, 4, 0], np.int32)})
    else:
        sets.append({"x": rand(31, 2, 4, 4), "lengths": np.array([2, 4], np.int32)})
    specs = [jax.ShapeDtypeStruct((b, t, 4), jnp.float32), jax.ShapeDtypeStruct((b,), jnp.int32)]
    return export(
        name,
        fn,
        specs,
        sets,
        exercises="flax.linen nn.RNN(GRUCell) with seq_lengths "
        "(per-sequence lengths): the final carry is each sequence's own last step"
        + (", batch fixed at 3 (symbolic B fails in jax2onnx)" if static_batch else ""),
        input_names=["x", "lengths"],
        output_names=["h", "y"],
        rnn_like=True,
    )


@model
def jax_linen_gru_seq_lengths():
    return _seq_lengths("jax_linen_gru_seq_lengths", False)


@model
def jax_linen_gru_seq_lengths_b3():
    return _seq_lengths("jax_linen_gru_seq_lengths_b3", True)


class ScanGRU(nn.Module):
    """nn.scan over a GRUCell, time-major, with the carry as an argument."""

    @nn.compact
    def __call__(self, h, xs):
        scan = nn.scan(
            nn.GRUCell,
            variable_broadcast="params",
            split_rngs={"params": False},
            in_axes=0,
            out_axes=0,
        )
        return scan(features=8)(h, xs)


@model
def jax_linen_nn_scan_gru_time_major():
    m = ScanGRU()
    h, xs = rand(40, 2, 8, scale=0.5), rand(41, 5, 2, 4)
    params = m.init(jax.random.PRNGKey(4), jnp.asarray(h), jnp.asarray(xs))
    sets = [{"h0": h, "xs": xs}, {"h0": rand(42, 3, 8, scale=0.5), "xs": rand(43, 9, 3, 4)}]
    return export(
        "jax_linen_nn_scan_gru_time_major",
        linen(m, params),
        [("B", 8), ("T", "B", 4)],
        sets,
        exercises="flax.linen nn.scan lifting a GRUCell over time-major xs [T,B,F]",
        input_names=["h0", "xs"],
        output_names=["h", "ys"],
        time_axis={"xs": 0},
        rnn_like=True,
    )


@model
def jax_nnx_rnn_gru():
    rnn = nnx.RNN(nnx.GRUCell(4, 8, rngs=nnx.Rngs(0)), rngs=nnx.Rngs(1))
    return export(
        "jax_nnx_rnn_gru",
        lambda x, h: rnn(x, initial_carry=h),
        [("B", "T", 4), ("B", 8)],
        [{"x": rand(0, 2, 5, 4), "h0": rand(1, 2, 8)}],
        exercises="flax.nnx RNN(GRUCell)",
        input_names=["x", "h0"],
        output_names=["y"],
        time_axis={"x": 1},
        rnn_like=True,
    )


# ---------------------------------------------------------------- jax.lax loops


def _gru_params(seed, features, hidden):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((features, 3 * hidden)) * 0.4).astype(np.float32)
    u = (rng.standard_normal((hidden, 3 * hidden)) * 0.4).astype(np.float32)
    b = (rng.standard_normal((3 * hidden,)) * 0.1).astype(np.float32)
    return w, u, b


def _gru_step(w, u, b, h, x):
    gx, gh = x @ w + b, h @ u
    hidden = h.shape[-1]
    z = jax.nn.sigmoid(gx[..., :hidden] + gh[..., :hidden])
    r = jax.nn.sigmoid(gx[..., hidden : 2 * hidden] + gh[..., hidden : 2 * hidden])
    n = jnp.tanh(gx[..., 2 * hidden :] + r * gh[..., 2 * hidden :])
    return (1 - z) * n + z * h


@model
def jax_lax_scan_gru_batch_major():
    w, u, b = _gru_params(50, 4, 8)

    def fn(x, h0):
        def step(h, xt):
            h = _gru_step(w, u, b, h, xt)
            return h, h

        h, ys = jax.lax.scan(step, h0, jnp.swapaxes(x, 0, 1))
        return jnp.swapaxes(ys, 0, 1), h

    sets = [
        {"x": rand(51, 2, 6, 4), "h0": rand(52, 2, 8, scale=0.3)},
        {"x": rand(53, 4, 3, 4), "h0": rand(54, 4, 8, scale=0.3)},
    ]
    return export(
        "jax_lax_scan_gru_batch_major",
        fn,
        [("B", "T", 4), ("B", 8)],
        sets,
        exercises="hand-written GRU step in lax.scan over swapaxes(x) (batch-major input, "
        "time-major scan), weights as constants",
        input_names=["x", "h0"],
        output_names=["ys", "h"],
        time_axis={"x": 1},
        rnn_like=True,
    )


@model
def jax_lax_scan_weights_as_inputs():
    w, u, b = _gru_params(60, 4, 6)

    def fn(xs, h0, w, u, b):
        def step(h, xt):
            h = _gru_step(w, u, b, h, xt)
            return h, jnp.sum(h, axis=-1)

        return jax.lax.scan(step, h0, xs)

    base = {"w": w, "u": u, "b": b}
    sets = [
        {"xs": rand(61, 5, 2, 4), "h0": rand(62, 2, 6), **base},
        {"xs": rand(63, 8, 1, 4), "h0": rand(64, 1, 6), **base},
    ]
    return export(
        "jax_lax_scan_weights_as_inputs",
        fn,
        [("T", "B", 4), ("B", 6), (4, 18), (6, 18), (18,)],
        sets,
        exercises="lax.scan GRU whose weights are graph inputs (loop-invariant inputs "
        "passed through the Loop)",
        input_names=["xs", "h0", "w", "u", "b"],
        output_names=["h", "s"],
        time_axis={"xs": 0},
        rnn_like=True,
    )


@model
def jax_lax_scan_reverse_cumsum():
    def fn(xs):
        def step(c, x):
            c = 0.9 * c + x
            return c, c

        return jax.lax.scan(step, jnp.zeros_like(xs[0]), xs, reverse=True)

    sets = [{"xs": rand(70, 6, 3)}, {"xs": rand(71, 11, 2)}]
    return export(
        "jax_lax_scan_reverse_cumsum",
        fn,
        [("T", "B")],
        sets,
        exercises="lax.scan(reverse=True): discounted reverse cumulative sum, carry from xs[0]",
        input_names=["xs"],
        output_names=["c", "ys"],
    )


@model
def jax_lax_scan_flip_cumsum():
    def fn(xs):
        def step(c, x):
            c = 0.9 * c + x
            return c, c

        c, ys = jax.lax.scan(step, jnp.zeros_like(xs[0]), jnp.flip(xs, 0))
        return c, jnp.flip(ys, 0)

    sets = [{"xs": rand(72, 6, 3)}, {"xs": rand(73, 11, 2)}]
    return export(
        "jax_lax_scan_flip_cumsum",
        fn,
        [("T", "B")],
        sets,
        exercises="reverse discounted cumsum written as flip -> lax.scan -> flip (jax2onnx "
        "refuses scan(reverse=True))",
        input_names=["xs"],
        output_names=["c", "ys"],
    )


@model
def jax_lax_scan_length_no_xs():
    def fn(x):
        def step(c, _):
            c = jnp.tanh(c @ jnp.eye(4, dtype=c.dtype) * 1.1 + 0.1)
            return c, c[..., 0]

        return jax.lax.scan(step, x, None, length=7)

    sets = [{"x": rand(80, 2, 4)}, {"x": rand(81, 5, 4)}]
    return export(
        "jax_lax_scan_length_no_xs",
        fn,
        [("B", 4)],
        sets,
        exercises="lax.scan with xs=None and length=7: a counted loop stacking an output",
        input_names=["x"],
        output_names=["c", "ys"],
    )


@model
def jax_lax_scan_nested():
    def fn(xs):
        def outer(c, row):
            def inner(d, v):
                d = d * 0.5 + v
                return d, d * d

            d, sq = jax.lax.scan(inner, c, row)
            return d, jnp.sum(sq, axis=0)

        return jax.lax.scan(outer, jnp.zeros(xs.shape[2:], xs.dtype), xs)

    sets = [{"xs": rand(90, 3, 4, 5)}, {"xs": rand(91, 2, 6, 5)}]
    return export(
        "jax_lax_scan_nested",
        fn,
        [("T", "U", 5)],
        sets,
        exercises="lax.scan inside lax.scan: nested loops, inner trip count U symbolic",
        input_names=["xs"],
        output_names=["d", "sums"],
    )


@model
def jax_fori_loop_static():
    def fn(x):
        return jax.lax.fori_loop(0, 6, lambda i, c: jnp.tanh(c * 1.3 + i.astype(c.dtype) * 0.1), x)

    sets = [{"x": rand(100, 2, 4)}, {"x": rand(101, 5, 4)}]
    return export(
        "jax_fori_loop_static",
        fn,
        [("B", 4)],
        sets,
        exercises="lax.fori_loop with static bounds 0..6, the counter used in the body",
        input_names=["x"],
        output_names=["y"],
    )


@model
def jax_fori_loop_dynamic():
    def fn(x, n):
        return jax.lax.fori_loop(0, n, lambda i, c: c * 0.9 + i.astype(c.dtype), x)

    sets = [
        {"x": rand(110, 2, 4), "n": np.array(5, np.int32)},
        {"x": rand(111, 3, 4), "n": np.array(0, np.int32)},
    ]
    return export(
        "jax_fori_loop_dynamic",
        fn,
        [("B", 4), jax.ShapeDtypeStruct((), jnp.int32)],
        sets,
        exercises="lax.fori_loop with a run-time upper bound (graph input n)",
        input_names=["x", "n"],
        output_names=["y"],
    )


@model
def jax_while_loop_count_input():
    def fn(x, n):
        def body(state):
            i, c = state
            return i + 1, c * 0.9 + i.astype(c.dtype)

        return jax.lax.while_loop(lambda s: s[0] < n, body, (jnp.int32(0), x))

    sets = [
        {"x": rand(120, 2, 4), "n": np.array(5, np.int32)},
        {"x": rand(121, 3, 4), "n": np.array(0, np.int32)},
    ]
    return export(
        "jax_while_loop_count_input",
        fn,
        [("B", 4), jax.ShapeDtypeStruct((), jnp.int32)],
        sets,
        exercises="lax.while_loop(i < n) with n a graph input: a fori_loop written by hand, "
        "run-time trip count (0 in set 2)",
        input_names=["x", "n"],
        output_names=["i", "y"],
    )


@model
def jax_while_loop_newton_sqrt():
    def fn(a):
        def cond(s):
            x, k = s
            return jnp.logical_and(jnp.max(jnp.abs(x * x - a)) > 1e-4, k < 50)

        def body(s):
            x, k = s
            return 0.5 * (x + a / x), k + 1

        return jax.lax.while_loop(cond, body, (jnp.ones_like(a), jnp.int32(0)))

    sets = [{"a": np.abs(rand(130, 5)) + 0.5}, {"a": np.abs(rand(131, 9)) * 10 + 0.1}]
    return export(
        "jax_while_loop_newton_sqrt",
        fn,
        [("N",)],
        sets,
        exercises="lax.while_loop with a data-dependent condition (Newton iterations to "
        "convergence) and an iteration counter",
        input_names=["a"],
        output_names=["x", "k"],
    )


@model
def jax_fori_in_scan():
    def fn(xs):
        def step(c, x):
            c, _ = jax.lax.fori_loop(0, 3, lambda i, s: (jnp.sin(s[0]) + s[1], s[1]), (c, x))
            return c, c.sum()

        return jax.lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)

    sets = [{"xs": rand(140, 4, 3)}, {"xs": rand(141, 7, 3)}]
    return export(
        "jax_fori_in_scan",
        fn,
        [("T", 3)],
        sets,
        exercises="lax.fori_loop (static 3) nested in lax.scan",
        input_names=["xs"],
        output_names=["c", "sums"],
    )


@model
def jax_lax_scan_f64():
    def fn(xs, h0):
        def step(h, x):
            h = jnp.tanh(h * 0.7 + x)
            return h, h

        return jax.lax.scan(step, h0, xs)

    sets = [
        {"xs": rand(150, 5, 2, 3).astype(np.float64), "h0": np.zeros((2, 3), np.float64)},
        {"xs": rand(151, 9, 4, 3).astype(np.float64), "h0": rand(152, 4, 3).astype(np.float64)},
    ]
    return export(
        "jax_lax_scan_f64",
        fn,
        [("T", "B", 3), ("B", 3)],
        sets,
        exercises="lax.scan in float64 (jax x64, enable_double_precision)",
        input_names=["xs", "h0"],
        output_names=["h", "ys"],
        time_axis={"xs": 0},
        rnn_like=True,
        double=True,
    )


@model
def jax_fori_kv_cache_update():
    rng = np.random.default_rng(160)
    wk = (rng.standard_normal((4, 4)) * 0.5).astype(np.float32)

    def fn(xs):
        steps = xs.shape[0]
        cache = jnp.zeros((steps, xs.shape[1], 4), xs.dtype)

        def body(i, state):
            # xs rides in the carry: jax2onnx's fori_loop cannot close over a traced value
            cache, xs = state
            row = jnp.tanh(xs[i] @ wk + cache.sum(axis=0) * 0.1)
            return jax.lax.dynamic_update_slice(cache, row[None], (i, 0, 0)), xs

        return jax.lax.fori_loop(0, 5, body, (cache, xs))[0]

    sets = [{"xs": rand(161, 5, 2, 4)}, {"xs": rand(162, 5, 3, 4)}]
    return export(
        "jax_fori_kv_cache_update",
        fn,
        [(5, "B", 4)],
        sets,
        exercises="lax.fori_loop writing row i of a zero-initialised cache with "
        "dynamic_update_slice and reading the whole cache each step (KV-cache style)",
        input_names=["xs"],
        output_names=["cache"],
    )


@model
def jax_lax_scan_cond_inside():
    def fn(xs):
        def step(c, x):
            c = jax.lax.cond(jnp.sum(x) > 0, lambda v: v + x, lambda v: v * 0.5 - x, c)
            return c, jnp.max(c)

        return jax.lax.scan(step, jnp.zeros(xs.shape[1:], xs.dtype), xs)

    sets = [{"xs": rand(170, 6, 3)}, {"xs": rand(171, 10, 3)}]
    return export(
        "jax_lax_scan_cond_inside",
        fn,
        [("T", 3)],
        sets,
        exercises="lax.cond inside lax.scan (an If in the Loop body)",
        input_names=["xs"],
        output_names=["c", "maxes"],
    )


@model
def jax_while_greedy_decode():
    rng = np.random.default_rng(180)
    emb = jnp.asarray((rng.standard_normal((6, 5)) * 0.8).astype(np.float32))
    w = (rng.standard_normal((5, 6)) * 0.8).astype(np.float32)

    def fn(start, max_len):
        def cond(s):
            i, tok, done, _ = s
            return jnp.logical_and(i < max_len, jnp.logical_not(jnp.all(done)))

        def body(s):
            i, tok, done, out = s
            logits = jnp.tanh(emb[tok]) @ w
            nxt = jnp.argmax(logits, axis=-1).astype(jnp.int32)
            nxt = jnp.where(done, 0, nxt)
            out = jax.lax.dynamic_update_slice(out, nxt[:, None], (0, i))
            return i + 1, nxt, jnp.logical_or(done, nxt == 0), out

        out = jnp.zeros((1, 8), jnp.int32) + start[:, None] * 0 - 1
        done = jnp.zeros(start.shape, bool)
        i, tok, done, out = jax.lax.while_loop(cond, body, (jnp.int32(0), start, done, out))
        return i, out

    sets = [
        {"start": np.array([1, 2, 3], np.int32), "max_len": np.array(8, np.int32)},
        {"start": np.array([4, 5], np.int32), "max_len": np.array(3, np.int32)},
    ]
    return export(
        "jax_while_greedy_decode",
        fn,
        [
            jax.ShapeDtypeStruct((jax.export.symbolic_shape("B")[0],), jnp.int32),
            jax.ShapeDtypeStruct((), jnp.int32),
        ],
        sets,
        exercises="greedy decoding in lax.while_loop: gather of embeddings by token, argmax, "
        "early stop when every sequence emitted token 0 or max_len reached, output buffer "
        "written with dynamic_update_slice",
        input_names=["start", "max_len"],
        output_names=["steps", "tokens"],
    )


if __name__ == "__main__":
    model.main()
