"""From a check's runs to its report: what the check was asked for (`Request`), the outputs of
the device, the reference and the second opinions (`Outcome`), and the report made of them
(`report_of`), each comparison at its tolerance.

Which comparisons take the tolerance of weights stored as f16 (`tolerance.F16_WEIGHTS`)::

    IR side: the device, its run after reset_state, the IR reference (they read the IR's weights)
    f32 side: the ONNX reference, onnxruntime, openvino.convert_model's IR (saved in f32),
              saved outputs (a framework's, presumably)
    a comparison is loosened when the IR stores weights as f16 and its two sides differ
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ov_loops.checking.caveats import empty_outputs
from ov_loops.checking.chunks import Chunking, ChunkSpec, combine, describe, resolve
from ov_loops.checking.device import DeviceRun, run_chunks_on_device, run_on_device
from ov_loops.checking.diff import diff
from ov_loops.checking.inputs import InputSpec, generate_inputs
from ov_loops.checking.opinions import opinion
from ov_loops.checking.report import CheckReport
from ov_loops.checking.saved import SavedOutputs, save_arrays
from ov_loops.checking.settings import Settings
from ov_loops.checking.tolerance import F16_WEIGHTS, Tolerance, Tolerances, magnitude
from ov_loops.convert_options import ConvertOptions
from ov_loops.logs import timed

AFTER_RESET = "after reset_state"
F16_SOURCE = "f16 weights"
_COMPARED = {"saved": "the saved outputs", AFTER_RESET: "the run after reset_state"}


@dataclass(frozen=True)
class Request:
    """A check's options beyond `Settings`; `conversion`: how an .onnx is converted (None: an
    IR, checked as it is)."""

    settings: Settings
    tolerances: Tolerances
    val_ranges: dict[str | None, tuple[float, float]]
    save_inputs: str | os.PathLike | None
    saved: SavedOutputs | None
    against: tuple[str, ...]
    chunks: ChunkSpec | None = None
    conversion: ConvertOptions | None = None
    specialise: bool = False  # the device runs the model specialised to the inputs' shapes

    def require_outputs(self, names: list[str]) -> None:
        """Output names in the options (tolerances, saved outputs) are the model's."""
        self.tolerances.require_outputs(names)
        if self.saved is not None:
            self.saved.require_names(names)

    def feeds(self, specs: list[InputSpec], given: dict) -> tuple[dict, list[str]]:
        """The inputs (saved when asked) and the names of those generated."""
        settings = self.settings
        feeds = generate_inputs(specs, given, settings.shapes, settings.seed, self.val_ranges)
        if self.save_inputs is not None:
            save_arrays(self.save_inputs, feeds, "inputs")
        return feeds, [name for name in feeds if name not in given]

    def chunking(self, feeds: dict) -> Chunking | None:
        """The chunks of `feeds` asked for (`--chunks`), if any."""
        return None if self.chunks is None else resolve(self.chunks, feeds)


@dataclass
class Outcome:
    """The device's outputs against the reference's, before the report is made; the second
    opinions (`deciding`: those that count for the verdict), the chunks fed (`chunks.describe`);
    `f16_weights`: the checked IR's constants stored as f16, `rounded_weights`: how many of
    them f16 rounded (`checking.weights`; all when the originals are unknown), `ir_reference`:
    whether the reference reads the IR (and so its weights)."""

    path: Path
    reference: str
    names: list[str]
    expected: list[np.ndarray]
    device: DeviceRun | None = None
    others: dict[str, list[np.ndarray] | str] = field(default_factory=dict)
    deciding: set[str] = field(default_factory=set)
    chunks: dict | None = None
    f16_weights: int = 0
    rounded_weights: int = 0
    ir_reference: bool = False

    def run_device(
        self, xml: Path, feeds: dict, request: Request, chunking: Chunking | None
    ) -> None:
        """Compile and run `xml` on the device: once on `feeds`, or (with a `Chunking`) chunk
        by chunk on one infer request, the outputs combined, and once more after reset_state."""
        settings = request.settings
        with timed(f"compiled and ran on {settings.device}"):
            if chunking is None:
                self.device = run_on_device(
                    xml, settings.device, settings.precision, feeds, settings.timeout
                )
                return
            split = chunking.split(feeds)
            chunked = run_chunks_on_device(
                xml, settings.device, settings.precision, split, feeds, settings.timeout
            )
        outputs, joined_along = combine(self.expected, chunked.chunks, chunking.axis)
        self.device = DeviceRun(outputs, chunked.precision)
        self.others[AFTER_RESET] = chunked.after_reset
        self.deciding.add(AFTER_RESET)
        self.chunks = describe(chunking, self.names, joined_along)

    def tolerances(
        self, request: Request, want: list[np.ndarray], mixed: bool, inference: str | None
    ) -> list[Tolerance]:
        """Each output's tolerance against `want`: that of weights stored as f16, scaled by
        max|want|, when the comparison is `mixed` (f16 weights on one side only)."""
        loosened = mixed and self.rounded_weights > 0
        return [
            request.tolerances.for_output(
                name, np.asarray(have).dtype, inference, magnitude(expected) if loosened else None
            )
            for name, have, expected in zip(self.names, self.device.outputs, want)
        ]


def report_of(outcome: Outcome, request: Request) -> CheckReport:
    """The report: each output at its tolerance, the second opinions, the saved outputs, the
    options the IR was made with and its weights."""
    settings, device = request.settings, outcome.device
    tolerances = outcome.tolerances(
        request, outcome.expected, not outcome.ir_reference, device.precision
    )
    rows = [
        diff(name, want, have, tolerance.rtol, tolerance.atol)
        for name, want, have, tolerance in zip(
            outcome.names, outcome.expected, device.outputs, tolerances
        )
    ]
    report = CheckReport(
        outcome.path, settings.device, settings.precision, rows, outcome.reference, tolerances
    )
    report.inferred, report.outputs = device.precision, device.outputs
    report.conversion = request.conversion
    report.f16_weights, report.rounded_weights = outcome.f16_weights, outcome.rounded_weights
    for name, outputs in outcome.others.items():
        mixed = (name == AFTER_RESET) != outcome.ir_reference  # its side against the reference's
        judged = opinion(
            name, outputs, outcome.names, outcome.expected,
            outcome.tolerances(request, outcome.expected, mixed, device.precision),
        )  # fmt: skip
        judged.decides = name in outcome.deciding
        report.opinions.append(judged)
    report.chunks = outcome.chunks
    if request.saved is not None:
        saved = request.saved.matched(outcome.names, device.outputs)
        at = outcome.tolerances(request, device.outputs, True, device.precision)
        judged = opinion("saved", saved, outcome.names, device.outputs, at, "device")
        judged.decides = True
        report.opinions.append(judged)
    report.warnings.extend(empty_outputs(device.outputs))
    _explain_f16_weights(report, request.conversion is not None)
    _explain_f64(report)
    return report


def _explain_f64(report: CheckReport) -> None:
    """A note naming the f64 outputs the device computed in a narrower precision, judged at
    that precision's tolerance; when one mismatches, a hint at models that cancel."""
    narrowed = [
        (row, at)
        for row, at in zip(report.rows, report.tolerances)
        if row.dtype == "float64" and at.precision != "f64"
    ]
    if not narrowed:
        return
    precision = narrowed[0][1].precision
    report.notes.append(
        f"{', '.join(row.name for row, _ in narrowed)}: f64 computed in {precision} (OpenVINO's "
        f"{report.device} plugin computes f64 as f32), so compared at {precision}'s tolerance, "
        "not f64's"
    )
    if not all(row.ok for row, _ in narrowed):
        report.hints.append(
            "an output that cancels (a variance k(x,x) - v.v) loses more than that in any f32 "
            "computation (onnxruntime's on an f32 export too): give --rtol/--atol NAME= where "
            "the error is f32's, not a defect"
        )


def _explain_f16_weights(report: CheckReport, converted: bool) -> None:
    """A note naming the comparisons made at the tolerance of f16 weights, and, when one of
    them fails, a hint at f32 weights."""
    loosened = [(f"the {report.reference.split(' (')[0]}", report.rows, report.tolerances)] + [
        (_COMPARED.get(opinion.name, f"{opinion.name}'s outputs"), opinion.rows, opinion.tolerances)
        for opinion in report.opinions
        if opinion.rows is not None
    ]
    used = [(what, rows) for what, rows, at in loosened if any(t.source == F16_SOURCE for t in at)]
    if not used:
        return
    report.notes.append(
        f"weights stored as f16, compared with results of f32 weights "
        f"({', '.join(what for what, _ in used)}) at tolerance '{F16_SOURCE}': rtol "
        f"{F16_WEIGHTS:.3g}, atol {F16_WEIGHTS:.3g} x max|expected| of each output (f16 rounds "
        "each weight by up to 2^-11 of it; see ov_loops.checking.tolerance)"
    )
    if all(row.ok for _, rows in used for row in rows):
        return
    report.hints.append(
        "--compress_to_fp16=False converts with f32 weights: check with it to tell f16 rounding "
        "from a defect"
        if converted
        else "the IR stores its weights as f16: convert it with --compress_to_fp16=False for "
        "f32 weights, or give --rtol/--atol"
    )
