"""The OPENVINO mode outside scans: Op translations compared with PyTensor's default mode, one
model compiled per input-shape signature, shared-variable updates and givens, and the one error
naming every Op without a translation. Skipped without pytensor (ov-loops[pytensor])."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

from ov_loops.frontends.pytensor.linker import CompiledFunction  # noqa: E402
from ov_loops.pytensor import UnsupportedOpError  # noqa: E402
from tests.child_process import run_python_surviving
from tests.frontends.pytensor.compare import compare  # noqa: E402

RNG = np.random.default_rng(11)
A = RNG.random((3, 4)) + 0.5
B = RNG.random(4) + 0.5


def test_elementwise_ops_and_a_fused_composite():
    x, y = pt.dmatrix("x"), pt.dvector("y")
    outputs = [
        pt.tanh(x * y) + pt.exp(-x) / (1 + pt.sqr(y)) - pt.sigmoid(x),
        pt.log(x) ** 2 + pt.sqrt(x) - abs(x - 1.2),
        pt.switch(x > y, pt.maximum(x, 0.9), pt.minimum(x, y)),
        pt.cast(x * 10 - 12, "int32") // 3 + (x > 1) * 1,
        pt.log1p(x) + pt.softplus(-x) + pt.erf(x),
        pt.gammaln(x * 30) + pt.gammaln(y / 100) + pt.psi(x * 20) + pt.psi(y / 50),
    ]
    compare([x, y], outputs, [A, B])


def test_dimshuffles_reductions_and_softmax():
    x = pt.dmatrix("x")
    outputs = [
        x.T[:, None, :].sum(axis=(0, 2)),
        x.dimshuffle("x", 1, 0),
        x.max(axis=0) + x.min() + x.prod(axis=1).sum() + x.mean(),
        pt.argmax(x, axis=1),
        pt.special.softmax(x, axis=-1),
        pt.special.log_softmax(x, axis=0),
        pt.special.softmax(x, axis=None) + pt.special.log_softmax(x, axis=None),
        pt.all(x > 0.6, axis=1),
    ]
    compare([x], outputs, [A])


def test_shapes_join_split_reshape_alloc():
    x, y = pt.dmatrix("x"), pt.dvector("y")
    first, second = pt.split(y, [1, 3], n_splits=2)
    outputs = [
        x.reshape((2, -1)),
        pt.concatenate([x, x[:1]], axis=0),
        first * 2,
        second,
        pt.alloc(y, 2, 4),
        pt.zeros_like(x) + x.shape[0],
        pt.stack([y.sum(), y[0]]),
        pt.arange(x.shape[1]),
    ]
    compare([x, y], outputs, [A, B])


def test_indexing_and_increments():
    x, y = pt.dmatrix("x"), pt.dvector("y")
    index = pt.lvector("i")
    outputs = [
        x[1:, ::-1],
        x[-1, 1:3],
        x[::-2],
        pt.set_subtensor(x[1:, 2], y[:2]),
        pt.inc_subtensor(x[0], 5.0),
        x[index],
        pt.inc_subtensor(x[index], 1.0),
    ]
    compare([x, y, index], outputs, [A, B, np.array([2, 0, 2])])


def test_matrix_products():
    x, y, z = pt.dmatrix("x"), pt.dvector("y"), pt.dtensor3("z")
    outputs = [x @ y, x.T @ x, pt.dot(y, y), pt.matmul(z, x.T)]
    compare([x, y, z], outputs, [A, B, RNG.random((2, 5, 4))])


def test_one_model_compiled_per_input_shape_signature():
    x = pt.dmatrix("x")
    function = pytensor.function([x], x.sum(axis=0), mode="OPENVINO")
    compiled = function.vm.jit_fn
    assert isinstance(compiled, CompiledFunction)
    for rows in (2, 3, 2, 3, 2):
        np.testing.assert_allclose(function(np.ones((rows, 4))), np.full(4, rows))
    assert len(compiled.plans) == 2


def test_float64_crosses_the_model_boundary_as_float32():
    """The CPU plugin computes f64 in f32; f64 inputs and outputs would cost a conversion node
    each (linker.BOUNDARY): the model takes and gives f32, the function f64, a Fortran-ordered
    array included; integers keep their type."""
    x, n = pt.dmatrix("x"), pt.lvector("n")
    function = pytensor.function([x, n], [x.sum(axis=0) * 2, n + 1], mode="OPENVINO")
    model = function.vm.jit_fn.model
    assert [p.get_element_type().to_dtype().name for p in model.get_parameters()] == [
        "float32",
        "int64",
    ]
    assert [r.get_element_type().to_dtype().name for r in model.outputs] == ["float32", "int64"]
    summed, counted = function(np.asfortranarray(A), np.array([1, 2], np.int64))
    assert summed.dtype == np.float64 and counted.dtype == np.int64
    np.testing.assert_allclose(summed, A.sum(axis=0) * 2, rtol=1e-6)
    np.testing.assert_array_equal(counted, [2, 3])


def test_a_model_the_device_refuses_is_lowered_at_default_once(caplog, monkeypatch):
    """When compiling the model lowered at max raises, the function lowers its scans at
    default, warns once, and computes."""
    x = pt.dvector("x")
    function = pytensor.function([x], x * 2, mode="OPENVINO")
    compiled = function.vm.jit_fn
    refusals = iter([RuntimeError("Can not create StaticMemory object")])
    real = CompiledFunction._compile

    def refuse_once(self, arrays):
        for refused in refusals:
            raise refused
        return real(self, arrays)

    monkeypatch.setattr(CompiledFunction, "_compile", refuse_once)
    with caplog.at_level("WARNING", logger="ov_loops.pytensor"):
        for _ in range(2):
            np.testing.assert_array_equal(function(np.ones(3)), np.full(3, 2.0))
    assert [r.getMessage() for r in caplog.records if "lowered at default" in r.getMessage()]
    assert compiled.rebuilt is None and len(compiled.plans) == 1


def test_shared_variable_updates_and_givens():
    x, y = pt.dvector("x"), pt.dvector("y")
    weight = pytensor.shared(np.float64(1.0), name="w")
    function = pytensor.function(
        [y], (x * weight).sum(), givens={x: y + 1}, updates={weight: weight * 2}, mode="OPENVINO"
    )
    assert [float(function(np.ones(3))) for _ in range(3)] == [6.0, 12.0, 24.0]
    assert weight.get_value() == 8.0


def test_ops_without_translation_are_named_together_before_compiling():
    x = pt.dvector("x")
    with pytest.raises(UnsupportedOpError, match="erfinv") as raised:
        pytensor.function([x], [pt.erfinv(x), pt.gamma(x) + 1], mode="OPENVINO")
    assert "gamma" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_inverse_and_general_solve_batched_and_not():
    a, b, batch = pt.dmatrix("a"), pt.dvector("b"), pt.dtensor3("batch")
    matrix = RNG.random((4, 4)) + 4 * np.eye(4)
    outputs = [pt.linalg.solve(a, b), pt.linalg.inv(a), pt.linalg.solve(a, pt.outer(b, b))]
    compare([a, b], outputs, [matrix, RNG.random(4)])
    compare([batch], [pt.linalg.inv(batch)], [RNG.random((3, 4, 4)) + 4 * np.eye(4)])


def test_cumulative_sums_along_an_axis_and_flattened():
    x = pt.dmatrix("x")
    outputs = [pt.cumsum(x, axis=0), pt.cumsum(x, axis=-1), pt.cumsum(x)]
    compare([x], outputs, [A])
    with pytest.raises(UnsupportedOpError, match="cumulative product"):
        pytensor.function([x], pt.cumprod(x, axis=0), mode="OPENVINO")


def test_linear_algebra_without_an_openvino_op_is_named():
    a = pt.dmatrix("a")
    with pytest.raises(UnsupportedOpError, match="Eigh"):
        pytensor.function([a], pt.linalg.eigh(a)[0], mode="OPENVINO")


def test_ifelse_takes_the_branch_of_each_call_with_their_own_shapes():
    from pytensor.ifelse import ifelse

    c, x, y = pt.dscalar("c"), pt.dvector("x"), pt.dvector("y")
    outputs = ifelse(c > 0, [x * 2, x.sum()], [y[:2], y.sum() * 3])
    function = pytensor.function([c, x, y], outputs, mode="OPENVINO")
    values = [np.arange(3.0), np.arange(5.0) + 10]
    for condition in (1.0, -1.0, 1.0):
        compare([c, x, y], outputs, [np.array(condition), *values])
    then, taken = function(1.0, *values), function(-1.0, *values)
    np.testing.assert_allclose(then[0], [0, 2, 4])
    np.testing.assert_allclose(taken[0], [10, 11])


def test_op_from_graph_is_inlined():
    from pytensor.compile.builders import OpFromGraph

    u, v = pt.dvectors("u", "v")
    inner = OpFromGraph([u, v], [u * v + 1, (u - v).sum()])
    x, y = pt.dvectors("x", "y")
    compare([x, y], inner(x, y), [RNG.random(3), RNG.random(3)])


_FAILED_INFERENCE_THEN_ANOTHER = """
import sys
import numpy as np, pytensor, pytensor.tensor as pt
from pytensor.compile.mode import Mode
import ov_loops.pytensor as ovp

mode = Mode(ovp.OpenVINOLinker(config=eval(sys.argv[1])), ovp.OPENVINO.provided_optimizer)
x, e = pt.dvector("x"), pt.dvector("e")
# an empty input: compiled with dynamic shapes, the Reshape fails when inferred
failing = pytensor.function([x, e], x.reshape((2, 3)) + e.sum(), mode=mode)
try:
    failing(np.ones(5), np.zeros(0))
except RuntimeError:
    print("raised")
del failing
print(pytensor.function([x], x * 2, mode=mode)(np.ones(3)))
"""


@pytest.mark.parametrize("config", [{}, {"INFERENCE_NUM_THREADS": 1}], ids=["default", "stream"])
def test_a_failed_inference_raises_and_the_next_function_runs(config, tmp_path):
    """An inference that fails raises (the CPU plugin's one-thread `infer` on a stream returned
    its output buffers unwritten) and leaves nothing to the next function's call (which
    segfaulted: the failed task stayed queued on the thread's stream, its request freed); with
    the default config (no stream) and with one stream of one thread; in a subprocess, so that
    a native crash fails the test."""
    result = run_python_surviving(["-c", _FAILED_INFERENCE_THEN_ANOTHER, repr(config)], tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["raised", "[2.", "2.", "2.]"]


def test_outputs_are_new_arrays_of_each_call():
    """The request's output buffers are bound once and rewritten by every call: what a call
    returned stays as it was; an input of 128 KiB or more (shared, not copied) too."""
    x = pt.dvector("x")
    function = pytensor.function([x], [x * 2, x.sum()], mode="OPENVINO")
    first = function(np.ones(3))
    second = function(np.full(3, 5.0))
    np.testing.assert_array_equal(first[0], [2, 2, 2])
    assert float(first[1]) == 3 and float(second[1]) == 15
    large = [np.arange(40000.0), np.arange(40000.0) + 1]
    results = [function(value)[0] for value in large]
    for value, result in zip(large, results):
        np.testing.assert_allclose(result, value * 2, rtol=1e-6)


def test_the_default_config_computes_in_the_calling_thread_alone():
    """NUM_STREAMS 0 (linker.DEFAULT_CONFIG): the CPU plugin runs the request in the thread
    that calls the function, and no other (per-thread CPU time, Linux); with a stream it ran
    in the stream's thread."""
    import threading
    from pathlib import Path

    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        pytest.skip("per-thread CPU times are read from /proc")

    def ticks() -> dict[str, int]:
        times = {}
        for task in tasks.iterdir():
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            times[task.name] = int(fields[11]) + int(fields[12])
        return times

    x = pt.fmatrix("x")
    y = x
    for _ in range(6):
        y = pt.tanh(y @ x)
    function = pytensor.function([x], y, mode="OPENVINO")
    value = RNG.random((384, 384)).astype(np.float32) / 384
    function(value)
    before = ticks()
    for _ in range(60):
        function(value)
    spent = {task: t - before.get(task, 0) for task, t in ticks().items()}
    mine = spent.pop(str(threading.get_native_id()))
    assert mine >= 20 and sum(spent.values()) <= mine // 10, (mine, spent)


def test_a_thread_count_given_runs_on_a_stream():
    """A config naming INFERENCE_NUM_THREADS gets a stream (NUM_STREAMS 0 would compute on
    one thread whatever it says) unless it names NUM_STREAMS."""
    from ov_loops.pytensor import OpenVINOLinker

    assert OpenVINOLinker().config["NUM_STREAMS"] == 0
    assert OpenVINOLinker(config={"INFERENCE_NUM_THREADS": 2}).config["NUM_STREAMS"] == 1
    given = {"INFERENCE_NUM_THREADS": 2, "NUM_STREAMS": 2}
    assert OpenVINOLinker(config=given).config["NUM_STREAMS"] == 2


@pytest.mark.parametrize("device", ["GPU", "NPU", "AUTO"])
def test_other_devices_get_the_precision_alone(device):
    """NUM_STREAMS 0 is the CPU plugin's calling-thread mode; other devices keep their own
    streams (their configs are theirs: untested here, no such device)."""
    from ov_loops.pytensor import OpenVINOLinker

    assert OpenVINOLinker(device=device).config == {"INFERENCE_PRECISION_HINT": "f32"}
    assert OpenVINOLinker(device=device, config={"X": 1}).config["X"] == 1
