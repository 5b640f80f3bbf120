"""The bounds on work and memory that both numpy references share.

Loops run by a reference count against one budget of iterations in total (nested loops
included), so nesting cannot multiply the work; every value a reference computes is bounded in
elements, and so are the outputs loops accumulate across iterations (all running loops
together). Hitting a bound is a one-line ConversionError naming the loop or node and the bound.

numpy is imported only when a value is measured, so the CLI reads the bounds without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ov_loops.errors import ConversionError

DEFAULT_MAX_ITERATIONS = 100_000  # loop iterations in total, across all loops of one run
MAX_VALUE_ELEMENTS = 2**27  # elements in any one value (512 MiB of f32)
MAX_LIVE_ELEMENTS = 2**28  # elements held by running loops' accumulated outputs, together


class Budget:
    """The work and memory one reference run may use; `reference` names it in errors."""

    def __init__(
        self,
        reference: str,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        max_value_elements: int = MAX_VALUE_ELEMENTS,
        max_live_elements: int = MAX_LIVE_ELEMENTS,
    ) -> None:
        if max_iterations < 1:
            raise ConversionError(f"{reference}: the iteration limit must be positive")
        self.reference = reference
        self.max_iterations = max_iterations
        self.max_value_elements = max_value_elements
        self.max_live_elements = max_live_elements
        self.iterations = 0
        self.live_elements = 0

    def iteration(self, where: str, index: int) -> None:
        """Count one iteration of the loop `where` (its `index`-th in this run)."""
        self.iterations += 1
        if self.iterations > self.max_iterations:
            raise ConversionError(
                f"{self.reference}: stopped in {where} at its iteration {index}: the loops "
                f"reached the limit of {self.max_iterations} iterations in total "
                "(--max-iterations); give inputs that stop them sooner"
            )

    def value(self, where: str, value: Any) -> int:
        """The elements of a value computed by `where` (all elements of a sequence, a list);
        refuses more than `max_value_elements`."""
        import numpy as np

        if value is None or isinstance(value, list):
            size = sum(int(np.size(element)) for element in value or [])
            shape = f"a sequence of {len(value or [])}"
        else:
            size, shape = int(np.size(value)), list(np.shape(value))
        if size > self.max_value_elements:
            raise ConversionError(
                f"{self.reference}: {where} computed a value of {size} elements "
                f"{shape}, over the limit of {self.max_value_elements} elements per value"
            )
        return size

    @contextmanager
    def accumulating(self, where: str) -> Iterator[_Accumulation]:
        """The outputs loop `where` accumulates; released when the loop ends."""
        accumulation = _Accumulation(self, where)
        try:
            yield accumulation
        finally:
            self.live_elements -= accumulation.elements


class _Accumulation:
    """Elements one running loop holds in its accumulated outputs."""

    def __init__(self, budget: Budget, where: str) -> None:
        self.budget = budget
        self.where = where
        self.elements = 0

    def add(self, value: Any) -> None:
        budget = self.budget
        size = budget.value(self.where, value)
        self.elements += size
        budget.live_elements += size
        if budget.live_elements > budget.max_live_elements:
            raise ConversionError(
                f"{budget.reference}: {self.where}: the outputs accumulated by the running "
                f"loops reach {budget.live_elements} elements, over the limit of "
                f"{budget.max_live_elements} elements in total"
            )
