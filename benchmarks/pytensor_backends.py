"""PyTensor's backends on scan-heavy functions: the OPENVINO mode against the C backend
(FAST_RUN), Numba and JAX (those installed), one thread each, f32, interleaved calls; prints
each backend's median latency, its 10th-90th percentile spread, and OPENVINO's ratio to each.

    rnn:      hs = scan(h_t = tanh(x_t + h_{t-1} W)), returns hs[-1]      (H=256, T=1000)
    rnn_grad: loss = sum(hs**2) and its gradient in x, h0 and W            (the same scan)

Issue 25's targets: OPENVINO <= 1.0 of the fastest other backend, <= 0.5 of C. Needs pytensor
(and numba, jax for those modes); run in the PyTensor venv:

    python benchmarks/pytensor_backends.py [--hidden 256] [--steps 1000] [--rounds 15]
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

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.compile.mode import Mode  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import ov_loops.pytensor as ov_pytensor  # noqa: E402
from benchmarks.timing import interleaved_seconds  # noqa: E402

ONE_THREAD = {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}


def modes() -> dict[str, object]:
    """The backends to compare: OPENVINO (one thread), C, and Numba/JAX when installed."""
    found = {
        "OPENVINO": Mode(
            ov_pytensor.OpenVINOLinker(config=ONE_THREAD), ov_pytensor.OPENVINO.provided_optimizer
        ),
        "C": "FAST_RUN",
    }
    found.update(
        {name.upper(): name.upper() for name in ("numba", "jax") if importlib.util.find_spec(name)}
    )
    return found


def graphs() -> dict[str, tuple[list, list]]:
    """Each benchmarked graph: (inputs, outputs)."""
    x, h0, w = pt.fmatrix("x"), pt.fvector("h0"), pt.fmatrix("W")
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


class Call:
    """A compiled function called like an infer request (interleaved_seconds's interface)."""

    def __init__(self, function) -> None:
        self.function = function

    def infer(self, feeds: list[np.ndarray]) -> list:
        return self.function(*feeds)


def measure(name: str, hidden: int, steps: int, rounds: int) -> None:
    """Compile `name` in every mode, check they agree, time them interleaved and print."""
    inputs, outputs = graphs()[name]
    rng = np.random.default_rng(0)
    feeds = [
        (rng.standard_normal((steps, hidden)) * 0.1).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
    ]
    calls = {mode: Call(pytensor.function(inputs, outputs, mode=m)) for mode, m in modes().items()}
    reference = calls["C"].infer(feeds)
    for mode, call in calls.items():
        for got, wanted in zip(call.infer(feeds), reference):
            np.testing.assert_allclose(got, wanted, rtol=2e-3, atol=2e-3, err_msg=mode)
    samples = interleaved_seconds(calls, feeds, rounds, clock="cpu")
    medians = {mode: float(np.median(s)) for mode, s in samples.items()}
    print(f"{name} H={hidden} T={steps}, {rounds} interleaved rounds (CPU time, one thread):")
    for mode, values in samples.items():
        low, high = np.percentile(values, [10, 90])
        ratio = medians["OPENVINO"] / medians[mode]
        print(
            f"  {mode:9s} median {medians[mode] * 1e3:9.2f} ms  "
            f"(p10-p90 {low * 1e3:.2f}-{high * 1e3:.2f})  OPENVINO / {mode} = {ratio:.3f}"
        )
    others = [m for m in medians if m != "OPENVINO"]
    fastest = min(others, key=medians.get)
    print(
        f"  targets: OPENVINO / fastest ({fastest}) = {medians['OPENVINO'] / medians[fastest]:.3f}"
        f" (<= 1.0), OPENVINO / C = {medians['OPENVINO'] / medians['C']:.3f} (<= 0.5)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--graphs", nargs="*", default=["rnn", "rnn_grad"])
    arguments = parser.parse_args()
    for name in arguments.graphs:
        measure(name, arguments.hidden, arguments.steps, arguments.rounds)


if __name__ == "__main__":
    main()
