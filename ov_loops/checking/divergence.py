"""Locating the first diverging iteration: an instrumented copy of the IR whose top-level loops
also emit their carried values per iteration, compared with the ONNX reference's trace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.api import save
from ov_loops.checking.device import run_isolated
from ov_loops.checking.diff import diff
from ov_loops.checking.settings import Settings
from ov_loops.conversion.report import Conversion

if TYPE_CHECKING:
    from ov_loops.reference.onnx_reference import Trace


@dataclass(frozen=True)
class Divergence:
    """Where a loop first computed something else than the reference."""

    loop_path: str
    iteration: int
    carried_index: int
    carried_name: str
    detail: str

    def text(self) -> str:
        return (
            f"first divergence: {self.loop_path}, iteration {self.iteration}, loop-carried "
            f"value {self.carried_index} '{self.carried_name}' ({self.detail})"
        )


def locate(
    conversion: Conversion, trace: Trace, feeds: dict, settings: Settings, scratch: str
) -> Divergence | None:
    """Instrument each top-level loop to emit its carried values per iteration and compare them,
    iteration by iteration, with the reference's trace (as far as the trace was recorded)."""
    loops = [loop for loop in conversion.loops if loop.top_level and loop.outputs]
    model = conversion.model
    instrumented, emitted = _instrument(model.clone(), {loop.path for loop in loops})
    if not emitted:
        return None
    xml = Path(scratch) / "instrumented.xml"
    save(instrumented, xml, compress_to_fp16=False)
    outputs = run_isolated(xml, settings.device, settings.precision, feeds)
    per_loop: dict[str, list[np.ndarray]] = {}
    for (loop_path, _), value in zip(emitted, outputs[len(model.outputs) :]):
        per_loop.setdefault(loop_path, []).append(value)
    for loop in loops:
        runs = trace.runs.get(loop.outputs[0])
        if not runs or loop.path not in per_loop:
            continue
        found = _first_difference(
            loop.path, runs[0], per_loop[loop.path], loop.carried, settings, trace.truncated
        )
        if found is not None:
            return found
    return None


def _first_difference(loop_path, reference_iterations, device_values, names, settings, partial):
    """The first iteration and carried value where the device's series leaves the reference's;
    or differing iteration counts (unless the reference's trace is `partial`)."""
    count = min(len(reference_iterations), *(len(v) for v in device_values))
    for iteration in range(count):
        for index, (want, series) in enumerate(zip(reference_iterations[iteration], device_values)):
            row = diff("", want, series[iteration], settings.rtol, settings.atol)
            if not row.ok:
                return Divergence(
                    loop_path,
                    iteration,
                    index,
                    names[index],
                    f"max abs err {row.max_abs_error:.3g}" + (f", {row.note}" if row.note else ""),
                )
    if not partial and any(len(v) != len(reference_iterations) for v in device_values):
        return Divergence(
            loop_path,
            count,
            -1,
            "",
            "the iteration counts differ: "
            f"reference {len(reference_iterations)}, device "
            f"{min(len(v) for v in device_values)}",
        )
    return None


def _instrument(model: ov.Model, paths: set[str]) -> tuple[ov.Model, list[tuple[str, int]]]:
    """Add, for each Loop whose rt_info path is in `paths`, one output per merged input: its
    value after each iteration. Returns the model and (path, merged index) per added output."""
    emitted = []
    for op in model.get_ordered_ops():
        if op.get_type_name() != "Loop" or "ov_loops_path" not in op.get_rt_info():
            continue
        path = op.get_rt_info()["ov_loops_path"].astype(str)
        if path not in paths:
            continue
        body = op.get_function()
        merged = [
            d for d in op.get_input_descriptions() if type(d).__name__ == "MergedInputDescription"
        ]
        for index, description in enumerate(merged):
            value = body.get_results()[description.body_value_index].input_value(0)
            part = ops.result(ops.unsqueeze(value, ops.constant(np.array([0], np.int64))))
            body.add_results([part])
            output = op.get_concatenated_slices(part.output(0), 0, 1, 1, -1, 0)
            op.validate_and_infer_types()
            model.add_outputs([output])
            emitted.append((path, index))
    return model, emitted
