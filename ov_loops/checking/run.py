"""`ov_loops.check`: run a model on a device and compare it with a numpy reference.

ONNX models are converted, validated, compiled and compared with the ONNX reference (and with
onnxruntime, when it is installed); IR is compiled and compared with the IR reference. When
outputs mismatch, an instrumented copy of the IR whose top-level loops also emit their carried
values per iteration locates the first iteration and carried value that diverged
(`ov_loops.checking.divergence`).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import openvino as ov

from ov_loops.api import save, translate
from ov_loops.checking.device import core, run_isolated, start_device_worker
from ov_loops.checking.diff import OutputDiff, diff
from ov_loops.checking.divergence import Divergence, locate, locate_ir
from ov_loops.checking.inputs import generate_inputs, ir_input_specs, load_inputs, onnx_input_specs
from ov_loops.checking.sequence_inputs import with_sequence_inputs
from ov_loops.checking.settings import Settings
from ov_loops.conversion.report import Conversion
from ov_loops.errors import ConversionError, InputError, OvLoopsError, message_line
from ov_loops.frontends.onnx.load import load_model
from ov_loops.ir.validate import validate
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS


@dataclass
class CheckReport:
    """Per output: shape, dtype, max abs / rel error, mismatching elements; and where it went
    wrong."""

    model: Path
    device: str
    precision: str
    rows: list[OutputDiff]
    reference: str
    second_opinion: list[OutputDiff] | None = None
    divergence: Divergence | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def lines(self) -> list[str]:
        lines = [
            f"{self.model} on {self.device}, inference precision {self.precision}, "
            f"against the {self.reference}"
        ]
        lines.append(
            f"  {'output':24} {'shape':16} {'dtype':9} {'max abs err':>12} {'max rel err':>12} "
            f"{'mismatches':>10}"
        )
        for row in self.rows:
            lines.append(
                f"  {row.name[:24]:24} {str(list(row.shape))[:16]:16} {row.dtype:9} "
                f"{row.max_abs_error:12.3g} {row.max_rel_error:12.3g} {row.mismatches:10d}"
                + (f"  {row.note}" if row.note else "")
            )
        if self.second_opinion is not None:
            worst = max((r.max_abs_error for r in self.second_opinion), default=0.0)
            agree = all(r.ok for r in self.second_opinion)
            lines.append(
                f"  onnxruntime {'agrees' if agree else 'DISAGREES'} with the device "
                f"(max abs err {worst:.3g})"
            )
        lines.extend(f"  note: {note}" for note in self.notes)
        if self.divergence is not None:
            lines.append(f"  {self.divergence.text()}")
        lines.append("MATCH" if self.ok else "MISMATCH")
        return lines


def check(
    model: str | os.PathLike,
    device: str = "CPU",
    inputs: str | os.PathLike | dict[str, np.ndarray] | None = None,
    shapes: dict[str, tuple[int, ...]] | None = None,
    seed: int = 0,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    precision: str = "f32",
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
) -> CheckReport:
    """Run `model` (.onnx or .xml) on `device` and compare it with the numpy reference.

    The references stop after `max_iterations` loop iterations in total. Compilation and
    inference run in a child process: a native crash there is an InputError naming the signal.
    """
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer, not {seed}")
    if max_iterations < 1:
        raise InputError(f"--max-iterations must be positive, not {max_iterations}")
    start_device_worker()  # it imports OpenVINO while we convert and run the reference
    path = Path(model)
    given = inputs if isinstance(inputs, dict) else load_inputs(inputs)
    settings = Settings(device, shapes or {}, seed, rtol, atol, precision, max_iterations)
    if path.suffix == ".xml":
        return _check_ir(path, given, settings)
    return _check_onnx(path, given, settings)


def _translate(source: onnx.ModelProto) -> Conversion:
    """`translate`, whose unexpected failures are one-line ConversionErrors."""
    try:
        return translate(source)
    except OvLoopsError:
        raise
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ConversionError(f"cannot convert: {type(exc).__name__}: {detail}") from None


def _check_onnx(path: Path, given: dict, settings: Settings) -> CheckReport:
    from ov_loops.reference.onnx_reference import Trace, run_onnx

    source = load_model(path)
    conversion = _translate(source)
    given, shapes = with_sequence_inputs(path, source, given, settings.shapes, settings.seed)
    feeds = generate_inputs(onnx_input_specs(source), given, shapes, settings.seed)
    trace = Trace()
    try:
        expected = run_onnx(source, feeds, max_iterations=settings.max_iterations, trace=trace)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="ov-loops-check-") as scratch:
        xml = Path(scratch) / "model.xml"
        save(conversion.model, xml)
        validation = validate(xml)
        got = run_isolated(xml, settings.device, settings.precision, feeds)
        names = [value.name for value in source.graph.output]
        report = CheckReport(
            path,
            settings.device,
            settings.precision,
            [
                diff(name, want, have, settings.rtol, settings.atol)
                for name, want, have in zip(names, expected, got)
            ],
            "ONNX reference (numpy)",
        )
        if validation.errors:
            report.notes.append(
                f"the converted IR has {len(validation.errors)} validation error(s)"
            )
        report.second_opinion = _onnxruntime_opinion(source, feeds, got, names, settings)
        if not report.ok:
            report.divergence = locate(source, conversion, trace, feeds, settings, scratch)
    return report


def _onnxruntime_opinion(source, feeds, got, names, settings: Settings):
    try:
        import onnxruntime
    except ImportError:
        return None
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its warnings would be stray lines on our stderr
    try:
        session = onnxruntime.InferenceSession(
            source.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        theirs = session.run(None, feeds)
    except Exception:  # onnxruntime rejects some valid models (e.g. untyped bodies)
        return None
    return [
        diff(name, want, have, settings.rtol, settings.atol)
        for name, want, have in zip(names, theirs, got)
    ]


def _check_ir(path: Path, given: dict, settings: Settings) -> CheckReport:
    from ov_loops.reference.ir_reference import Trace, run_ir

    validation = validate(path)
    model = _core_read(path)
    feeds = generate_inputs(ir_input_specs(model), given, settings.shapes, settings.seed)
    trace = Trace()
    try:
        expected = run_ir(path, feeds, max_iterations=settings.max_iterations, trace=trace)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    got = run_isolated(path, settings.device, settings.precision, feeds)
    rows = []
    for output, have in zip(model.outputs, got):
        want = next((expected[n] for n in output.get_names() if n in expected), None)
        if want is None:
            raise InputError(f"IR reference: no value for output '{output.get_any_name()}'")
        rows.append(diff(output.get_any_name(), want, have, settings.rtol, settings.atol))
    report = CheckReport(path, settings.device, settings.precision, rows, "IR reference (numpy)")
    if validation.errors:
        report.notes.append(
            f"the IR has {len(validation.errors)} validation error(s): run ov-loops validate"
        )
    if not report.ok:
        report.divergence = locate_ir(model, trace, feeds, settings)
    return report


def _core_read(path: Path) -> ov.Model:
    try:
        return core().read_model(str(path))
    except RuntimeError as exc:
        detail = message_line(exc, last=True)
        raise InputError(f"{path}: OpenVINO cannot read it: {detail}") from None
