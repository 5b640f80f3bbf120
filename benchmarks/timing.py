"""Interleaved latency sampling shared by the benchmarks."""

from __future__ import annotations

import time

import numpy as np

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def interleaved_seconds(
    requests: dict, feeds: dict, rounds: int, clock: str = "wall"
) -> dict[str, np.ndarray]:
    """Latency samples of each request, one per round, the order rotated every round (two
    requests: A B, then B A). `clock` "cpu" counts the process's CPU time instead of wall time:
    on a machine shared with other work, time spent waiting for a core is left out (one
    inference thread, so CPU time is its run time)."""
    now = CLOCKS[clock]
    samples = {name: [] for name in requests}
    order = list(requests)
    for round_ in range(rounds):
        shift = round_ % len(order)
        for name in order[shift:] + order[:shift]:
            start = now()
            requests[name].infer(feeds)
            samples[name].append(now() - start)
    return {name: np.array(values) for name, values in samples.items()}
