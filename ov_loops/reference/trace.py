"""What a run recorded for locating divergences: every loop's carried values after each of its
iterations (with the enclosing loops' iterations it ran in), and the main graph's values.

Both numpy references fill one (`run_onnx(..., trace=)`, `run_ir(..., trace=)`), and
`ov_loops.checking.probes` decodes what an instrumented OpenVINO model emitted into one, so
that `ov_loops.checking.divergence` compares like with like.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ov_loops.reference.limits import MAX_LIVE_ELEMENTS

Where = tuple[tuple[str, int], ...]  # the enclosing loops (key, iteration), outermost first


def loop_key(scope: str, name: str) -> str:
    """The key of loop `name` (an IR layer name) in the graph at path `scope` ("main",
    "<loop key>/body"): `scope/name`, or the name itself when it already is a path in `scope`
    (ov-loops names each Loop by its ONNX node path)."""
    return name if name.startswith(f"{scope}/") else f"{scope}/{name}"


class LoopRun(list):
    """One run of a loop: its carried values after each iteration (a list per iteration);
    `where` says in which iteration of which enclosing loop it ran, `order` when it started
    among all recorded runs. A device's run of a Loop-5 may record fewer iterations than the
    loop ran: `step` of them per recorded one (unrolled by `step`; the last may be fewer), and
    `continues` says it goes on where the previous run of its key stopped (the second Loop-5 of
    a split loop); `observed` is, once known, the iteration each recorded one ends (None:
    every iteration is recorded)."""

    def __init__(self, where: Where = (), order: int = 0) -> None:
        super().__init__()
        self.where = where
        self.order = order
        self.step = 1
        self.continues = False
        self.observed: list[int] | None = None


@dataclass
class Trace:
    """Per loop key (a node path, or the ONNX reference's first output name): its runs. Per
    main-graph value name: the value (`values`). Recording stops, and `truncated` says so, past
    `max_elements`."""

    runs: dict[str, list[LoopRun]] = field(default_factory=lambda: defaultdict(list))
    values: dict[str, np.ndarray] = field(default_factory=dict)
    max_elements: int = MAX_LIVE_ELEMENTS
    elements: int = 0
    truncated: bool = False
    _enclosing: list[tuple[str, int]] = field(default_factory=list)
    _started: int = 0

    def start(self, key: str) -> LoopRun:
        """A new run of loop `key`, inside the iterations now being run."""
        run = LoopRun(tuple(self._enclosing), self._started)
        self._started += 1
        self.runs[key].append(run)
        return run

    @contextmanager
    def inside(self, key: str, iteration: int) -> Iterator[None]:
        """Loops started within are in iteration `iteration` of loop `key`."""
        self._enclosing.append((key, iteration))
        try:
            yield
        finally:
            self._enclosing.pop()

    def record(self, run: list[list[np.ndarray]], values: list[np.ndarray]) -> None:
        """Append one iteration's carried values to `run`, within the element bound."""
        if self._admit(values):
            run.append([np.array(value) for value in values])

    def keep(self, name: str, value: np.ndarray) -> None:
        """Keep a main-graph value, within the element bound."""
        if self._admit([value]):
            self.values[name] = np.asarray(value)

    def _admit(self, values: list) -> bool:
        size = sum(int(np.size(value)) for value in values)
        if self.truncated or self.elements + size > self.max_elements:
            self.truncated = True
            return False
        self.elements += size
        return True
