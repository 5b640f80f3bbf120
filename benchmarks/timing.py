"""Interleaved latency sampling shared by the benchmarks."""

from __future__ import annotations

import time

import numpy as np


def interleaved_seconds(requests: dict, feeds: dict, rounds: int) -> dict[str, np.ndarray]:
    """Latency samples of each request, one per round, the order rotated every round (two
    requests: A B, then B A)."""
    samples = {name: [] for name in requests}
    order = list(requests)
    for round_ in range(rounds):
        shift = round_ % len(order)
        for name in order[shift:] + order[:shift]:
            start = time.perf_counter()
            requests[name].infer(feeds)
            samples[name].append(time.perf_counter() - start)
    return {name: np.array(values) for name, values in samples.items()}
