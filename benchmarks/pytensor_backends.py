"""PyTensor's backends on scan-heavy functions: the OPENVINO mode against the C backend
(FAST_RUN), Numba and JAX (those installed), one thread each, interleaved calls; prints each
backend's median CPU time per call, its 10th-90th percentile spread, and OPENVINO's ratio to
each.

    rnn:      hs = scan(h_t = tanh(x_t + h_{t-1} W)), returns hs[-1]   (f32, H=256, T=1000)
    rnn_grad: loss = sum(hs**2) and its gradient in x, h0 and W         (the same scan)
    pymc:     a PyMC AR(1) model's logp and its gradient, as pm.sample calls them
              (logp_dlogp_function; the scan of tests/frontends/pytensor/test_pymc.py, 60
              steps, f64), 50 calls a sample

The inputs' shapes are static (JAX's backend needs them to trace the scan); --dynamic leaves
the RNN's unknown to PyTensor, as pt.fmatrix does, without JAX. Issue 25's targets:
OPENVINO <= 1.0 of the fastest other backend, <= 0.5 of C. Needs pytensor (and numba, jax,
pymc for those columns and graphs); run in the PyTensor venv:

    python benchmarks/pytensor_backends.py [--hidden 256] [--steps 1000] [--rounds 15] [--dynamic]
"""

from __future__ import annotations

import os

for _variable in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
):
    os.environ.setdefault(_variable, "1")  # one thread, set before numpy and numba load
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)  # JAX's one thread

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import ov_loops.pytensor  # noqa: E402, F401  (registers mode="OPENVINO")
from benchmarks.timing import interleaved_seconds  # noqa: E402


def modes(jax: bool = True) -> dict[str, object]:
    """The backends to compare: OPENVINO (its default: one thread, the calling one), C, and
    Numba/JAX when installed (JAX unless `jax` is False)."""
    found = {"OPENVINO": "OPENVINO", "C": "FAST_RUN"}
    found.update(
        {
            name.upper(): name.upper()
            for name in ("numba", "jax")
            if importlib.util.find_spec(name) and (jax or name != "jax")
        }
    )
    return found


def rnn_graphs(hidden: int, steps: int, static: bool = True) -> dict[str, tuple[list, list]]:
    """The RNN's graphs: (inputs, outputs); the inputs' shapes known to PyTensor if `static`."""
    steps_, hidden_ = (steps, hidden) if static else (None, None)
    x = pt.tensor("x", shape=(steps_, hidden_), dtype="float32")
    h0 = pt.tensor("h0", shape=(hidden_,), dtype="float32")
    w = pt.tensor("W", shape=(hidden_, hidden_), dtype="float32")
    hs = pytensor.scan(
        lambda row, h, m: pt.tanh(row + h @ m),
        sequences=[x],
        outputs_info=[h0],
        non_sequences=[w],
        return_updates=False,
    )
    loss = (hs**2).sum()
    return {
        "rnn": ([x, h0, w], [hs[-1]]),
        "rnn_grad": ([x, h0, w], [loss, *pytensor.grad(loss, [x, h0, w])]),
    }


# The CPU time of the process counts every thread: what a backend's threads still do after
# its call returned was counted in the next backend's call. XLA's threads stay busy for up to
# 0.1 s after JAX's RNN gradient (4.5 ms of system time in a 30 ms sleep begun 20 ms after
# it): OPENVINO's loss+gradient took 10-19 ms of system time right after JAX's call, 0.1-0.5
# ms after the others' or its own, 0.3 ms after JAX's with 0.2 s to settle (rusage, 6 rounds).
# Each call copies its outputs, drops the backend's, and lets its threads settle, on its own
# clock.
SETTLE_SECONDS = 0.2


class Call:
    """A compiled function called `repeat` times like an infer request (interleaved_seconds's
    interface); the outputs become numpy arrays (JAX's are computed asynchronously), then the
    backend's threads settle (SETTLE_SECONDS, counted as its own)."""

    def __init__(self, function, repeat: int = 1) -> None:
        self.function, self.repeat = function, repeat

    def infer(self, feeds: list[np.ndarray]) -> list:
        for _ in range(self.repeat):
            outputs = self.function(*feeds)
        values = [np.array(output, copy=True) for output in outputs]
        del outputs  # (a backend's own buffers freed on its own clock)
        time.sleep(SETTLE_SECONDS)
        return values


def rnn_calls(
    name: str, hidden: int, steps: int, static: bool
) -> tuple[dict[str, Call], list[np.ndarray]]:
    """The RNN graph `name` compiled in every mode (JAX only with `static` shapes), and its
    inputs."""
    inputs, outputs = rnn_graphs(hidden, steps, static)[name]
    rng = np.random.default_rng(0)
    feeds = [
        (rng.standard_normal((steps, hidden)) * 0.1).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
    ]
    calls = {
        mode: Call(pytensor.function(inputs, outputs, mode=m))
        for mode, m in modes(jax=static).items()
    }
    return calls, feeds


GRAPHS = ("rnn", "rnn_grad", "pymc")
PYMC_CALLS = 50  # calls of the PyMC model's function per sample


# A row that is not a backend: OPENVINO's call of a function of one node (x * 2) on the same
# point, through PyTensor's Function, the linker and an infer request: the floor of any
# OPENVINO call.
FLOOR = "OV x*2"


def pymc_calls() -> tuple[dict[str, Call], list[np.ndarray]]:
    """The PyMC model's logp+dlogp function (raveled inputs) in every mode, the floor (FLOOR),
    and a point."""
    from tests.frontends.pytensor.test_pymc import ar1_model

    model = ar1_model()
    point = np.concatenate([np.ravel(v) for v in model.initial_point().values()]) + 0.1
    calls = {}
    for mode, m in modes().items():
        function = model.logp_dlogp_function(mode=m, ravel_inputs=True)
        function.set_extra_values({})
        calls[mode] = Call(function, PYMC_CALLS)
    x = pt.dvector("x", shape=point.shape)
    calls[FLOOR] = Call(pytensor.function([x], [x * 2], mode="OPENVINO"), PYMC_CALLS)
    return calls, [point]


def measure(name: str, hidden: int, steps: int, rounds: int, static: bool = True) -> None:
    """Compile `name` in every mode, check they agree, time them interleaved and print."""
    calls, feeds = pymc_calls() if name == "pymc" else rnn_calls(name, hidden, steps, static)
    per_call = calls["C"].repeat
    reference = calls["C"].infer(feeds)
    for mode, call in calls.items():
        if mode == FLOOR:
            continue
        for got, wanted in zip(call.infer(feeds), reference):
            np.testing.assert_allclose(got, wanted, rtol=2e-3, atol=2e-3, err_msg=mode)
    samples = {
        mode: values / per_call
        for mode, values in interleaved_seconds(calls, feeds, rounds, clock="cpu").items()
    }
    medians = {mode: float(np.median(s)) for mode, s in samples.items()}
    shape = "AR(1), 60 steps" if name == "pymc" else f"H={hidden} T={steps}"
    shape += "" if static or name == "pymc" else " (shapes unknown to PyTensor)"
    print(f"{name} {shape}, {rounds} interleaved rounds (CPU time per call, one thread):")
    for mode, values in samples.items():
        low, high = np.percentile(values, [10, 90])
        ratio = medians["OPENVINO"] / medians[mode]
        print(
            f"  {mode:9s} median {medians[mode] * 1e3:9.3f} ms  "
            f"(p10-p90 {low * 1e3:.3f}-{high * 1e3:.3f})  OPENVINO / {mode} = {ratio:.3f}"
        )
    others = [m for m in medians if m not in ("OPENVINO", FLOOR)]
    fastest = min(others, key=medians.get)
    print(
        f"  targets: OPENVINO / fastest ({fastest}) = {medians['OPENVINO'] / medians[fastest]:.3f}"
        f" (<= 1.0), OPENVINO / C = {medians['OPENVINO'] / medians['C']:.3f} (<= 0.5)"
    )
    if FLOOR in medians:
        print(f"  floor: {FLOOR} / {fastest} = {medians[FLOOR] / medians[fastest]:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--graphs", nargs="*", default=["rnn", "rnn_grad", "pymc"], choices=GRAPHS)
    parser.add_argument(
        "--dynamic",
        action="store_true",
        help="the RNN's input shapes unknown to PyTensor (pt.fmatrix); no JAX, which needs them",
    )
    arguments = parser.parse_args()
    for name in arguments.graphs:
        measure(name, arguments.hidden, arguments.steps, arguments.rounds, not arguments.dynamic)


if __name__ == "__main__":
    main()
