"""PyTensor's random variables on the OPENVINO mode against the C backend (numpy's Generator)
and JAX's (jax.random), one thread each, interleaved calls: each draw's median CPU time per
call, its 10th-90th percentile spread and OPENVINO's ratio to the others. The rejection samplers
(gamma, poisson and those drawn from them) run a Loop-5 whose trip count is the most tries any
element needed; normal is the reference of a draw without a loop.

    python benchmarks/pytensor_random.py [--draws 100000] [--rounds 11] [--only poisson]

Needs pytensor (and jax for its column); run in the PyTensor venv.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
import numpy as np  # noqa: E402
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402

from benchmarks.pytensor_backends import Call, modes  # noqa: E402  (sets one thread first)
from benchmarks.timing import interleaved_seconds  # noqa: E402

COVARIANCE = np.eye(5) + 0.5

DRAWS = {
    "normal": lambda s, n: s.normal(0.0, 1.0, size=n),
    "gamma(2.5)": lambda s, n: s.gamma(2.5, scale=1.0, size=n),
    "gamma(0.3)": lambda s, n: s.gamma(0.3, scale=1.0, size=n),
    "beta(2, 3)": lambda s, n: s.beta(2.0, 3.0, size=n),
    "t(4)": lambda s, n: s.t(4.0, size=n),
    "poisson(3)": lambda s, n: s.poisson(3.0, size=n),
    "poisson(9.9)": lambda s, n: s.poisson(9.9, size=n),
    "poisson(100)": lambda s, n: s.poisson(100.0, size=n),
    "dirichlet(5)": lambda s, n: s.dirichlet(np.ones(5), size=n // 5),
    "mvnormal(5)": lambda s, n: s.multivariate_normal(np.zeros(5), COVARIANCE, size=n // 5),
}


def calls(name: str, draws: int) -> dict[str, Call]:
    """The draw `name` compiled in every mode (a RandomStream: new draws on every call)."""
    found = {}
    for mode, spec in modes().items():
        variable = DRAWS[name](pt.random.utils.RandomStream(seed=1), draws)
        try:
            found[mode] = Call(pytensor.function([], [variable], mode=spec))
        except Exception as error:  # noqa: BLE001  (a backend without this draw: no column)
            print(f"{name}: {mode} cannot compile it ({type(error).__name__})")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--only", default="", help="the draws whose name starts so")
    args = parser.parse_args()
    print(f"{args.draws} draws a call, CPU ms: median (p10-p90), OPENVINO / other")
    for name in (name for name in DRAWS if name.startswith(args.only)):
        compiled = calls(name, args.draws)
        for call in compiled.values():
            call.infer([])  # compile and warm up
        samples = interleaved_seconds(compiled, [], args.rounds, clock="cpu")
        medians = {mode: np.median(times) * 1e3 for mode, times in samples.items()}
        cells = [
            f"{mode} {medians[mode]:.2f} ({np.percentile(times, 10) * 1e3:.2f}-"
            f"{np.percentile(times, 90) * 1e3:.2f})"
            for mode, times in samples.items()
        ]
        ratios = [
            f"/{mode} {medians['OPENVINO'] / medians[mode]:.2f}"
            for mode in medians
            if mode != "OPENVINO"
        ]
        print(f"{name:14} " + "  ".join(cells) + "  " + " ".join(ratios))


if __name__ == "__main__":
    main()
