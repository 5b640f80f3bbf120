"""PyTensor's scans on the OPENVINO mode: the graphs of PyTensor's JAX-backend scan tests
(tests/link/jax/test_scan.py), ported: the same graphs and expectations, each compared with
PyTensor's default mode. Skipped without pytensor (an optional extra: ov-loops[pytensor])."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.compile.mode import get_mode  # noqa: E402
from pytensor.graph.basic import applys_between  # noqa: E402
from pytensor.graph.fg import FunctionGraph  # noqa: E402
from pytensor.scan import until  # noqa: E402
from pytensor.scan.op import Scan  # noqa: E402

from ov_loops.frontends.pytensor.linker import build_model  # noqa: E402
from ov_loops.ovgraph import all_ops  # noqa: E402
from tests.child_process import run_python_surviving
from tests.frontends.pytensor.compare import compare  # noqa: E402

VIEWS = [None, (-1,), slice(-2, None, None)]
SLICED_VIEWS = [None, (-1,), slice(-4, -1, None)]


def scan(*args, **kwargs):
    """pytensor.scan returning only its outputs."""
    return pytensor.scan(*args, return_updates=False, **kwargs)


def _viewed(value, view):
    return value if view is None else value[view]


def _is_scan(node) -> bool:
    return isinstance(node.op, Scan)


def _scans(function) -> int:
    return sum(_is_scan(node) for node in function.maker.fgraph.apply_nodes)


@pytest.mark.parametrize("view", VIEWS)
def test_sit_sot(view):
    start = pt.scalar("x0", dtype="float64")
    values = scan(lambda previous: previous + 1, outputs_info=[start], n_steps=10)
    compare([start], [_viewed(values, view)], [np.e])


@pytest.mark.parametrize("view", SLICED_VIEWS)
def test_mit_sot(view):
    start = pt.vector("x0", dtype="float64", shape=(3,))
    values = scan(
        lambda back3, back1: back3 + back1 + 1,
        outputs_info=[{"initial": start, "taps": [-3, -1]}],
        n_steps=10,
    )
    compare([start], [_viewed(values, view)], [np.full((3,), np.e)])


@pytest.mark.parametrize("view_x", SLICED_VIEWS)
@pytest.mark.parametrize("view_y", SLICED_VIEWS)
def test_two_mit_sots(view_x, view_y):
    x0 = pt.vector("x0", dtype="float64", shape=(3,))
    y0 = pt.vector("y0", dtype="float64", shape=(4,))
    xs, ys = scan(
        lambda x3, x1, y4, y2: (x3 + y4 + 1, x1 + y2 + 2),
        outputs_info=[{"initial": x0, "taps": [-3, -1]}, {"initial": y0, "taps": [-4, -2]}],
        n_steps=10,
    )
    outputs = [_viewed(xs, view_x), _viewed(ys, view_y)]
    compare([x0, y0], outputs, [np.full((3,), np.e), np.full((4,), np.pi)])


@pytest.mark.parametrize("view", [None, (-2,), slice(None, None, 2)])
def test_nit_sot(view):
    xs = pt.vector("x0", dtype="float64", shape=(10,))
    ys = scan(lambda x: pt.exp(x), outputs_info=[None], sequences=[xs])
    mode = get_mode("OPENVINO").excluding("scan_pushout")  # else no Scan is left
    values = [np.random.default_rng(49).normal(size=10)]
    function, _ = compare([xs], [_viewed(ys, view)], values, mode=mode)
    assert _scans(function) == 1


def test_shared_variable_updated_by_the_scan():
    constant_part = pytensor.shared(np.array(0.0), name="sh_static")
    doubled = pytensor.shared(np.array(1.0), name="sh_update")
    xs, updates = pytensor.scan(
        lambda s, u: (s + u, {u: u * 2}),
        outputs_info=[None],
        non_sequences=[constant_part, doubled],
        strict=True,
        n_steps=7,
        return_updates=True,
    )
    function = pytensor.function([], xs, updates=updates, mode="OPENVINO")
    np.testing.assert_array_equal(function(), 2.0 ** np.arange(7))
    constant_part.set_value(1.0)
    np.testing.assert_array_equal(function(), 2.0 ** np.arange(7, 14) + 1.0)
    constant_part.set_value(2.0)
    doubled.set_value(1.0)
    np.testing.assert_array_equal(function(), 2.0 ** np.arange(7) + 2.0)


def test_while_scan():
    """JAX's backend refuses while scans (xfail there); here they run."""
    xs = scan(lambda x: (x + 1, until(x < 10)), outputs_info=[pt.zeros(())], n_steps=100)
    _, (got,) = compare([], [xs], [])
    assert got.shape == (1,)


def test_while_scan_that_runs_several_steps():
    limit = pt.scalar("limit", dtype="float64")
    xs = scan(
        lambda x, top: (x * 2, until(x * 2 > top)),
        outputs_info=[pt.ones(())],
        non_sequences=[limit],
        n_steps=100,
    )
    _, (got,) = compare([limit], [xs], [np.float64(45.0)])
    np.testing.assert_array_equal(got, [2, 4, 8, 16, 32, 64])


def test_mit_sot_with_non_sequence():
    a = pt.scalar("a")
    ys = scan(
        lambda y1, y3, scale: (y1 + y3) * scale,
        outputs_info=[
            {
                "initial": pt.as_tensor_variable(
                    np.r_[-1.0, 1.3, 0.0].astype(pytensor.config.floatX)
                ),
                "taps": [-1, -3],
            }
        ],
        non_sequences=[a],
        n_steps=10,
        name="y_scan",
    )
    compare([a], [ys], [np.array(10.0).astype(pytensor.config.floatX)])


@pytest.mark.parametrize("x0_type", [pt.dvector, pt.dmatrix])
def test_nd_sit_sot(x0_type):
    x0, a = x0_type("x0"), pt.dmatrix("A")
    xs = scan(lambda x, m: m @ x, non_sequences=[a], outputs_info=[x0], n_steps=3)
    start = np.arange(3.0) if x0.ndim == 1 else np.diag(np.arange(3.0))
    compare([x0, a], [xs], [start, np.eye(3)])


def test_nd_sit_sot_with_sequence():
    x = pt.matrix("x0", shape=(3, 3), dtype="float64")
    a = pt.matrix("A", shape=(3, 3), dtype="float64")
    xs = scan(lambda row, m: m @ row, non_sequences=[a], sequences=[x], n_steps=3)
    compare([x, a], [xs], [np.arange(9.0).reshape(3, 3), np.eye(3)])


def test_nd_mit_sot():
    x0, a, b = (pt.matrix(n, shape=(3, 3), dtype="float64") for n in ("x0", "A", "B"))
    xs = scan(
        lambda x3, x1, m, n: m @ x3 + n @ x1,
        outputs_info=[{"initial": x0, "taps": [-3, -1]}],
        non_sequences=[a, b],
        n_steps=10,
    )
    compare([x0, a, b], [xs], [np.arange(9.0).reshape(3, 3), np.eye(3), np.eye(3)])


def test_nd_sit_sot_with_a_second_output():
    x0 = pt.vector("x0", shape=(3,), dtype="float64")
    a = pt.matrix("A", shape=(3, 3), dtype="float64")
    xs = scan(lambda x, m: (m @ x, x.sum()), outputs_info=[x0, None], non_sequences=[a], n_steps=10)
    compare([x0, a], xs, [np.arange(3.0), np.eye(3)])


def test_matrix_product_state_without_blas_rewrites():
    a, b = pt.dmatrix("A"), pt.dmatrix("B")
    out = scan(lambda x, m: x @ m, outputs_info=[a], non_sequences=[b], n_steps=2)
    compare([a, b], [out], [np.eye(3), np.eye(3)])


def test_sequence_of_dynamic_length_including_zero():
    x = pt.tensor("x", shape=(None, 3), dtype="float64")
    out = scan(lambda row: row + 1, outputs_info=[None], sequences=[x])
    function = pytensor.function([x], out, mode=get_mode("OPENVINO").excluding("scan"))
    assert _scans(function) == 1
    np.testing.assert_allclose(function(np.array([[1.0, 2, 3]])), [[2, 3, 4]])
    assert function(np.zeros((0, 3))).shape == (0, 3)


def test_sequence_taps_and_go_backwards():
    x = pt.dmatrix("x")
    ys = scan(lambda a, b: a * b, sequences=[{"input": x, "taps": [-1, 1]}], go_backwards=True)
    compare([x], [ys], [np.random.default_rng(3).random((6, 2))])


def test_rnn_with_a_sequence_and_weights():
    x, h0, w = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("W")
    hs = scan(
        lambda xt, h, m: pt.tanh(xt + h @ m), sequences=[x], outputs_info=[h0], non_sequences=[w]
    )
    rng = np.random.default_rng(5)
    compare([x, h0, w], [hs, hs[-1]], [rng.random((5, 3)), rng.random(3), rng.random((3, 3))])


def test_last_state_of_a_static_rnn_is_carried_not_stacked():
    """Static shapes: PyTensor shrinks the scan's buffer to the one row hs[-1] reads (index 0
    of a [1, H] buffer); the Loop carries that state and stacks no row per step."""
    x = pt.tensor("x", shape=(7, 3), dtype="float32")
    h0 = pt.tensor("h0", shape=(3,), dtype="float32")
    w = pt.tensor("W", shape=(3, 3), dtype="float32")
    hs = scan(
        lambda xt, h, m: pt.tanh(xt + h @ m), sequences=[x], outputs_info=[h0], non_sequences=[w]
    )
    rng = np.random.default_rng(5)
    values = [
        rng.random((7, 3), np.float32),
        rng.random(3, np.float32),
        rng.random((3, 3), np.float32),
    ]
    function, _ = compare([x, h0, w], [hs[-1]], values)
    loops = [op for op in all_ops(function.vm.jit_fn.model) if op.get_type_name() == "Loop"]
    assert loops
    shapes = [str(output.get_partial_shape()) for op in loops for output in op.outputs()]
    assert shapes == ["[3]"], shapes  # the last state, no [7, 3] stack of every step's


@pytest.mark.parametrize("r, x0", [(8.0, 1e-30), (0.5, 1e38)], ids=["overflow", "underflow"])
def test_ar1_scan_whose_coefficient_products_leave_f32_gives_the_loops_values(r, x0):
    """x_t = r x_{t-1} + e_t over 200 steps, solved as a recurrence at max: 8^200 overflows
    f32 while 1e-30 8^t stays finite until t = 75 (then inf, as in the loop); 0.5^200
    underflows while 1e38 0.5^t stays 6e-23: the loop runs instead (e all 0)."""
    e = pt.tensor("e", shape=(200,), dtype="float32")
    start = pt.tensor("x0", shape=(), dtype="float32")
    rate = pt.tensor("r", shape=(), dtype="float32")
    xs = scan(
        lambda et, x, k: k * x + et, sequences=[e], outputs_info=[start], non_sequences=[rate]
    )
    values = [np.zeros(200, np.float32), np.float32(x0), np.float32(r)]
    function, got = compare([e, start, rate], [xs[:70], xs[-1]], values)
    last = np.float32(x0)
    with np.errstate(over="ignore"):
        for _ in range(200):
            last = np.float32(last * np.float32(r))
    np.testing.assert_allclose(got[1], last, rtol=1e-5, atol=0)  # 6e-23 is below compare's atol
    model = function.vm.jit_fn.model
    assert "If" in {op.get_type_name() for op in model.get_ordered_ops()}  # the solved form


def test_gradient_through_a_scan_with_a_mit_sot():
    """pytensor.grad through a scan builds a scan with mit-mot outputs (JAX test_scan_mit_mot)."""
    rho = pt.scalar("rho", dtype="float64")
    x0 = pt.vector("xs", shape=(2,), dtype="float64")
    y0 = pt.vector("ys", shape=(3,), dtype="float64")
    outs, _ = scan(
        lambda x1, y3, y1, r: ((x1 + y1) * r, y3 * (1 - r) + y1 * r),
        outputs_info=[x0, {"initial": y0, "taps": [-3, -1]}],
        non_sequences=[rho],
        n_steps=10,
    )
    gradients = pt.grad(outs.sum(), wrt=[x0, y0, rho])
    function, _ = compare(
        [x0, y0, rho], gradients, [np.arange(2.0), np.array([0.5, 0.5, 0.5]), np.array(0.95)]
    )
    mit_mots = [n.op.info.n_mit_mot for n in function.maker.fgraph.apply_nodes if _is_scan(n)]
    assert sum(mit_mots) > 0


def _rnn_loss(steps: int, seed: int):
    """An RNN's sum of squared states: (inputs x, h0, W; the loss; values for them)."""
    x, h0, w = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("W")
    hs = scan(
        lambda xt, h, m: pt.tanh(xt + h @ m), sequences=[x], outputs_info=[h0], non_sequences=[w]
    )
    rng = np.random.default_rng(seed)
    values = [rng.random((steps, 3)), rng.random(3), rng.random((3, 3)) * 0.5]
    return [x, h0, w], (hs**2).sum(), values


def test_value_and_gradient_of_an_rnn_loss():
    inputs, loss, values = _rnn_loss(6, 7)
    compare(inputs, [loss, *pt.grad(loss, wrt=inputs)], values)


def test_gradient_scan_carries_rows_not_its_mit_mot_buffer():
    """The gradient scan's mit-mot (the gradient of h, read at rows i and i + 1, written at
    i + 1) is carried as one row: no Loop body scatters into a buffer of every step."""
    inputs, loss, values = _rnn_loss(40, 3)
    function, _ = compare(inputs, pt.grad(loss, wrt=inputs), values)
    assert any(n.op.info.n_mit_mot for n in function.maker.fgraph.apply_nodes if _is_scan(n))
    loops = [op for op in all_ops(function.vm.jit_fn.model) if op.get_type_name() == "Loop"]
    assert loops
    kinds = {op.get_type_name() for loop in loops for op in all_ops(loop.get_function())}
    assert not kinds & {"ScatterUpdate", "ScatterNDUpdate", "ScatterElementsUpdate"}


def test_gradient_of_a_weight_matrix_is_not_a_stack_of_every_step():
    """The gradient of W is a sit-sot read only at [-1] after the gradient scan: the Loop
    returns its last value, not a [T, H, H] stack of every step's."""
    inputs, loss, values = _rnn_loss(40, 3)
    function, _ = compare(inputs, pt.grad(loss, wrt=inputs), values)
    model = function.vm.jit_fn.model.clone()
    model.reshape({p.output(0): np.shape(v) for p, v in zip(model.get_parameters(), values)})
    loops = [op for op in all_ops(model) if op.get_type_name() == "Loop"]
    shapes = [str(output.get_partial_shape()) for op in loops for output in op.outputs()]
    assert "[3,3]" in shapes, shapes  # the gradient of W: its last value
    assert not [shape for shape in shapes if shape.endswith(",3,3]")], shapes  # no stack of it


def test_truncated_gradient():
    """truncate_gradient=3: the gradient scan runs 3 steps into buffers of every step, the
    rows it does not reach zero (Scan.perform's step 6), not a shorter output."""
    x, h0, w = pt.dvector("x"), pt.dscalar("h0"), pt.dscalar("w")
    hs = scan(
        lambda xt, h, m: pt.tanh(xt + h * m),
        sequences=[x],
        outputs_info=[h0],
        non_sequences=[w],
        truncate_gradient=3,
    )
    loss = (hs**2).sum()
    _, got = compare([x, h0, w], pt.grad(loss, [x, h0, w]), [np.linspace(-1, 1, 8), 0.3, 0.7])
    assert np.count_nonzero(got[0]) == 3


def _binomial_logp(n, p, k):
    log_choose = pt.gammaln(n + 1) - pt.gammaln(k + 1) - pt.gammaln(n - k + 1)
    return log_choose + k * pt.log(p) + (n - k) * pt.log(1 - p)


def test_seir_model_log_probability_and_its_gradient():
    """JAX test_scan_benchmark's SEIR model: its loss and PyTensor's gradients of it."""
    infected, removed = (pt.vector(n, dtype="int32", shape=(1200,)) for n in ("C_t", "D_t"))
    s0, e0, i0, beta, gamma, delta = (
        pt.scalar(n, dtype="float64") for n in ("s0", "e0", "i0", "beta", "gamma", "delta")
    )

    def step(c, d, s, e, i, b, g, dl):
        new = (s * b).astype(s.dtype)
        logp_c, logp_d = _binomial_logp(e, g, c), _binomial_logp(i, dl, d)
        return s - new, e + new - c, i + c - d, logp_c, logp_d

    *_, logp_c, logp_d = scan(
        step,
        sequences=[infected, removed],
        outputs_info=[s0, e0, i0, None, None],
        non_sequences=[beta, gamma, delta],
    )
    loss = logp_c.sum() + logp_d.sum()
    gradients = pt.grad(loss, wrt=[s0, e0, i0, beta, gamma, delta])
    values = [
        np.array([3, 5, 8, 13, 21, 26, 10, 3] * 150, np.int32),
        np.array([1, 2, 3, 7, 9, 11, 5, 1] * 150, np.int32),
        *(np.array(v) for v in (100.0, 50.0, 25.0, 0.277792, 0.135330, 0.108753)),
    ]
    inputs = [infected, removed, s0, e0, i0, beta, gamma, delta]
    compare(inputs, [loss, *gradients], values)


def test_gradients_of_scans_with_an_int32_step_count():
    """PyTensor's tests/scan/test_checkpoints.py backward pass: A**k by a scan and by
    scan_checkpoints, k an int32 input that sizes nit-sots (their length was subtracted from an
    i64 length)."""
    from pytensor.scan.checkpoints import scan_checkpoints

    k, a = pt.iscalar("k"), pt.vector("A")
    arguments = dict(
        fn=lambda s, prior, m: prior * m / s,
        outputs_info=pt.ones_like(a),
        sequences=[pt.arange(k, dtype="float32") + 1],
        non_sequences=a,
        n_steps=k,
    )
    checkpointed = scan_checkpoints(save_every_N=100, return_updates=False, **arguments)
    gradients = [pt.grad(powers[-1].sum(), a) for powers in (scan(**arguments), checkpointed)]
    compare([a, k], gradients, [np.arange(10.0), np.int32(101)])


def test_the_gradient_of_reduce_compiles_at_max(caplog):
    """The gradient of `reduce` lowered at max: its unrolled loop reads only constants and the
    input's shape, a constant once the model is reshaped to static shapes; the CPU plugin
    refused it ("Can not create StaticMemory object") until keep-constant-loops-at-run-time
    gave it a run-time input; the function no longer falls back to level default."""
    from pytensor.scan.views import reduce as scan_reduce

    x = pytensor.shared(np.random.default_rng(0).uniform(size=(10,)))  # float64
    start = pt.constant(np.float64(0.0))
    total = scan_reduce(lambda v, acc: acc + v, x, start, return_updates=False)
    gradient = pytensor.function([], pytensor.grad(total, x), mode="OPENVINO")
    with caplog.at_level("WARNING", logger="ov_loops.pytensor"):
        np.testing.assert_array_equal(gradient(), np.ones(10))
    assert not any("lowered at default" in record.getMessage() for record in caplog.records)


def test_a_vectorised_scan_is_a_loop_over_its_batch():
    """vectorize_graph makes a Blockwise of the Scan (PyTensor's tests/scan test_blockwise_scan):
    two batch axes, one of them broadcast from size 1 in h0, the weights not batched."""
    from pytensor.graph.replace import vectorize_graph
    from pytensor.tensor.blockwise import Blockwise

    x, h0, w = pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("w")
    hs, total = scan(
        lambda row, h, acc, weights: [pt.tanh(row + h @ weights), acc + row.sum()],
        sequences=[x],
        outputs_info=[h0, pt.zeros(())],
        non_sequences=[w],
    )
    xs, h0s = pt.dtensor4("xs"), pt.tensor("h0s", dtype="float64", shape=(None, 1, None))
    rng = np.random.default_rng(3)
    outputs = vectorize_graph([hs, total], {x: xs, h0: h0s})
    function, _ = compare(
        [xs, h0s, w],
        outputs,
        [rng.random((2, 3, 5, 4)), rng.random((2, 1, 4)), rng.random((4, 4)) - 0.5],
    )
    nodes = function.maker.fgraph.apply_nodes
    assert any(isinstance(n.op, Blockwise) and isinstance(n.op.core_op, Scan) for n in nodes)


def test_higher_order_derivatives():
    """ScanCompatibilityTests.check_higher_order_derivative: xs[-1] = x ** 16 and its first three
    derivatives (mit-mots with taps of both signs); the third compared with the default mode,
    which gets it wrong too (PyTensor's FIXME), the others with their closed forms too."""
    x = pt.dscalar("x")
    xs = scan(lambda xtm1: xtm1**2, outputs_info=[x], n_steps=4)
    r = xs[-1]
    g = pytensor.grad(r, x)
    gg = pytensor.grad(g, x)
    ggg = pytensor.grad(gg, x)
    x_test = np.array(0.95)
    _, got = compare([x], [r, g, gg, ggg], [x_test])
    wanted = [x_test**16, 16 * x_test**15, 16 * 15 * x_test**14]
    np.testing.assert_allclose(got[:3], wanted, rtol=1e-5)


def test_trace_truncation_regression_bug():
    """A Scan built directly whose sit-sot buffer has exactly n_steps rows (fewer than the
    initial value and every step's): the buffer keeps the last n_steps of them."""
    from pytensor.scan.op import ScanInfo

    n_steps = pt.as_tensor(7, dtype=int)
    x0 = pt.dscalar("x0")
    x0_buffer = pt.empty((n_steps,))[0].set(x0)
    xtm1 = x0.type()
    info = ScanInfo(
        n_seqs=0,
        mit_mot_in_slices=(),
        mit_mot_out_slices=(),
        mit_sot_in_slices=(),
        sit_sot_in_slices=((-1,),),
        n_nit_sot=0,
        n_untraced_sit_sot=0,
        n_non_seqs=0,
        as_while=False,
    )
    xs_with_x0 = Scan(inputs=[xtm1], outputs=[xtm1 + 1], info=info)(n_steps, x0_buffer)
    _, (got,) = compare([x0], [xs_with_x0], [np.array(0.0)])
    np.testing.assert_array_equal(got, np.arange(1.0, 8.0))


def test_translating_a_scan_leaves_its_inner_graph_as_it_was():
    """The OPENVINO translation rewrites a copy of a Scan's inner graph: other functions built
    from the same Scan read the graph as it was (PyTensor's own modes rewrite copies too)."""
    x, h0 = pt.vector("x"), pt.scalar("h0")
    ys = scan(lambda x_t, h: pt.exp(pt.log(h)) + x_t * 0.0 + x_t, sequences=[x], outputs_info=[h0])
    (scan_op,) = {node.op for node in applys_between([x, h0], [ys]) if _is_scan(node)}
    before = [str(node) for node in scan_op.fgraph.toposort()]
    build_model(FunctionGraph([x, h0], [ys]))
    assert [str(node) for node in scan_op.fgraph.toposort()] == before


# PyTensor's tests/scan test_pushout_seqs (3.0.x): a scan of the gradients of the outputs of a
# scan. Lowered at max its gradient loop, unrolled and split, had two last-value outputs of one
# body Result, and the CPU plugin crashed compiling it (tests/lower/test_loop5_outputs.py).
_SCAN_OF_GRADIENTS = """
import logging, sys
import numpy as np, pytensor, pytensor.tensor as pt
import ov_loops.pytensor
from tests.frontends.pytensor.compare import compare

logging.basicConfig(level=logging.WARNING, stream=sys.stdout)
X, x_star, s_star = pt.dmatrix("X"), pt.dvector("x_star"), pt.dmatrix("s_star")
rng = np.random.default_rng(1)
h = pytensor.shared(rng.uniform(0.5, 1.5, size=(3, 7)))

def mean_i(i, x_star, s_star, X, h):
    D = X.shape[1]
    iL = pt.diag(h[i, :D])
    inp = (X - x_star).dot(iL)
    t = inp.dot(iL.dot(s_star).dot(iL))
    return (inp * t).sum() * h[i, D]

M = pytensor.scan(mean_i, sequences=pt.arange(h.shape[0]), non_sequences=[x_star, s_star, X, h],
                  return_updates=False)
dM = pytensor.scan(lambda i, M, x: pytensor.grad(M[i], x), sequences=pt.arange(M.shape[0]),
                   non_sequences=[M, x_star], return_updates=False)
compare([X, x_star, s_star], [dM], [rng.random((10, 4)), rng.random(4), np.eye(4)])
print("compared")
"""


def test_a_scan_of_gradients_compiles_at_max(tmp_path):
    """The scan of gradients runs at max (no fallback to default, no crash) and equals the
    default mode; in a subprocess, so that a native crash fails the test."""
    result = run_python_surviving(["-c", _SCAN_OF_GRADIENTS], tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "compared" in result.stdout
    assert "lowered at default" not in result.stdout + result.stderr
