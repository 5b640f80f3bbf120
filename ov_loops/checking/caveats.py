"""Warnings that keep a MATCH honest: outputs that are all empty compare nothing, and a loop
that ran zero times on generated inputs tested none of its body."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ov_loops.conversion.report import ConvertedLoop

if TYPE_CHECKING:
    from ov_loops.reference.onnx_reference import Trace


def empty_outputs(outputs: list[np.ndarray]) -> list[str]:
    """A warning when every output is empty (none when the model has no outputs)."""
    if outputs and all(np.size(value) == 0 for value in outputs):
        return ["every output is empty: no element was compared"]
    return []


def loops_never_run(loops: list[ConvertedLoop], trace: Trace, generated: list[str]) -> list[str]:
    """A warning naming the loops the reference ran zero times (in some run), when inputs were
    generated (`generated` names them: give such inputs with --val-range or --inputs)."""
    if not generated or trace.truncated:
        return []
    idle = [
        loop.path
        for loop in loops
        if loop.outputs and any(len(run) == 0 for run in trace.runs.get(loop.outputs[0], []))
    ]
    if not idle:
        return []
    return [
        f"loop(s) {', '.join(idle)} ran zero times on the generated inputs (generated: "
        f"{', '.join(generated)}); fix trip counts with --val-range NAME=LO,HI or --inputs"
    ]
