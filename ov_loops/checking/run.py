"""`ov_loops.check`: run a model on a device and compare it with a numpy reference.

ONNX models are converted, validated, compiled and compared with the ONNX reference (and with
onnxruntime, when it is installed, and `openvino.convert_model`'s IR when asked: second
opinions, `opinions.py`); IR is compiled and compared with the IR reference. The report
(`report.py`) says per output which tolerance (`tolerance.py`) and precision were used. When
outputs mismatch, an instrumented copy of the IR whose top-level loops also emit their carried
values per iteration locates the first iteration and carried value that diverged
(`ov_loops.checking.divergence`).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import openvino as ov

from ov_loops.api import save, translate
from ov_loops.checking.caveats import empty_outputs, loops_never_run
from ov_loops.checking.device import DeviceRun, core, run_on_device, start_device_worker
from ov_loops.checking.diff import diff
from ov_loops.checking.divergence import locate, locate_ir
from ov_loops.checking.inputs import (
    InputSpec,
    generate_inputs,
    ir_input_specs,
    load_inputs,
    onnx_input_specs,
)
from ov_loops.checking.opinions import (
    convert_model_outputs,
    onnxruntime_outputs,
    opinion,
    require_against,
)
from ov_loops.checking.report import CheckReport
from ov_loops.checking.saved import SavedOutputs, require_directory, save_arrays
from ov_loops.checking.sequence_inputs import with_sequence_inputs
from ov_loops.checking.settings import Settings
from ov_loops.checking.tolerance import Tolerances, parse_tolerances
from ov_loops.conversion.report import Conversion
from ov_loops.errors import ConversionError, InputError, OvLoopsError, message_line
from ov_loops.frontends.onnx.load import load_model
from ov_loops.ir.validate import validate
from ov_loops.logs import timed
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS

__all__ = ["CheckReport", "check"]


def check(
    model: str | os.PathLike,
    device: str = "CPU",
    inputs: str | os.PathLike | dict[str, np.ndarray] | None = None,
    shapes: dict[str, tuple[int, ...]] | None = None,
    seed: int = 0,
    rtol: float | None = None,
    atol: float | None = None,
    precision: str = "f32",
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    *,
    tolerances: Tolerances | None = None,
    val_ranges: dict[str | None, tuple[float, float]] | None = None,
    save_inputs: str | os.PathLike | None = None,
    save_outputs: str | os.PathLike | None = None,
    load_outputs: str | os.PathLike | None = None,
    against: tuple[str, ...] = (),
) -> CheckReport:
    """Run `model` (.onnx or .xml) on `device` and compare it with the numpy reference.

    Tolerances go by the precision each output was computed in (`ov_loops.checking.tolerance`);
    `rtol`/`atol` replace the float defaults, `tolerances` (`parse_tolerances`) also per output.
    `val_ranges` bounds generated values (by input name; None: all number inputs). The inputs
    fed and the device's outputs can be saved as .npz (`save_inputs`, `save_outputs`); outputs
    saved earlier (`load_outputs`) are compared with the device's and decide the verdict too.
    `against=("convert-model",)` also runs `openvino.convert_model`'s IR. The references stop
    after `max_iterations` loop iterations in total. Compilation and inference run in a child
    process: a native crash there is an InputError naming the signal.
    """
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer, not {seed}")
    if max_iterations < 1:
        raise InputError(f"--max-iterations must be positive, not {max_iterations}")
    path = Path(model)
    require_against(tuple(against), path.suffix != ".xml")
    tolerances = tolerances or parse_tolerances(rtol, atol)
    start_device_worker()  # it imports OpenVINO while we convert and run the reference
    given = inputs if isinstance(inputs, dict) else load_inputs(inputs)
    f32 = tolerances.for_output("", np.float32, "f32")
    settings = Settings(device, shapes or {}, seed, f32.rtol, f32.atol, precision, max_iterations)
    saved = None if load_outputs is None else SavedOutputs.read(load_outputs)
    request = _Request(settings, tolerances, val_ranges or {}, save_inputs, saved, against)
    for target, what in ((save_inputs, "inputs"), (save_outputs, "outputs")):
        require_directory(target, what)
    report = (_check_ir if path.suffix == ".xml" else _check_onnx)(path, given, request)
    if save_outputs is not None:
        named = dict(zip((row.name for row in report.rows), report.outputs))
        save_arrays(save_outputs, named, "outputs")
    return report


IR_NOT_FOR_ONNXRUNTIME = (
    "the model is an IR (onnxruntime runs ONNX: compare with its outputs through --load-outputs)"
)


@dataclass(frozen=True)
class _Request:
    """A check's options beyond `Settings`."""

    settings: Settings
    tolerances: Tolerances
    val_ranges: dict[str | None, tuple[float, float]]
    save_inputs: str | os.PathLike | None
    saved: SavedOutputs | None
    against: tuple[str, ...]

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


@dataclass
class _Outcome:
    """The device's outputs against the reference's, before the report is made."""

    path: Path
    reference: str
    names: list[str]
    expected: list[np.ndarray]
    device: DeviceRun
    others: dict[str, list[np.ndarray] | str] = field(default_factory=dict)


def _report(outcome: _Outcome, request: _Request) -> CheckReport:
    """The report: each output at its tolerance, the second opinions, the saved outputs."""
    settings, device = request.settings, outcome.device
    tolerances = [
        request.tolerances.for_output(name, np.asarray(have).dtype, device.precision)
        for name, have in zip(outcome.names, device.outputs)
    ]
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
    for name, outputs in outcome.others.items():
        report.opinions.append(opinion(name, outputs, outcome.names, outcome.expected, tolerances))
    if request.saved is not None:
        saved = request.saved.matched(outcome.names, device.outputs)
        judged = opinion("saved", saved, outcome.names, device.outputs, tolerances, "device")
        judged.decides = True
        report.opinions.append(judged)
    report.warnings.extend(empty_outputs(device.outputs))
    return report


def _settled(request: _Request, report: CheckReport) -> Settings:
    """The settings with the float tolerance of the precision the device inferred in (for the
    divergence locator)."""
    float_tolerance = request.tolerances.for_output("", np.float32, report.inferred)
    return dataclasses.replace(
        request.settings, rtol=float_tolerance.rtol, atol=float_tolerance.atol
    )


def _translate(source: onnx.ModelProto) -> Conversion:
    """`translate`, whose unexpected failures are one-line ConversionErrors."""
    try:
        with timed("model converted"):
            return translate(source)
    except OvLoopsError:
        raise
    except Exception as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise ConversionError(f"cannot convert: {type(exc).__name__}: {detail}") from None


def _check_onnx(path: Path, given: dict, request: _Request) -> CheckReport:
    from ov_loops.reference.onnx_reference import Trace, run_onnx

    settings = request.settings
    source = load_model(path)
    request.require_outputs([value.name for value in source.graph.output])
    conversion = _translate(source)
    given, shapes = with_sequence_inputs(path, source, given, request.val_ranges, settings)
    request = dataclasses.replace(request, settings=dataclasses.replace(settings, shapes=shapes))
    feeds, generated = request.feeds(onnx_input_specs(source), given)
    trace = Trace()
    try:
        with timed("ONNX reference ran"):
            expected = run_onnx(source, feeds, max_iterations=settings.max_iterations, trace=trace)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="ov-loops-check-") as scratch:
        xml = Path(scratch) / "model.xml"
        save(conversion.model, xml, compress_to_fp16=False)  # the references compute in f32
        validation = validate(xml)
        with timed(f"compiled and ran on {settings.device}"):
            device = run_on_device(xml, settings.device, settings.precision, feeds)
        names = [value.name for value in source.graph.output]
        outcome = _Outcome(path, "ONNX reference (numpy)", names, expected, device)
        with timed("onnxruntime ran"):
            outcome.others["onnxruntime"] = onnxruntime_outputs(source, feeds)
        if "convert-model" in request.against:
            with timed("openvino.convert_model's IR ran"):
                outcome.others["convert_model"] = convert_model_outputs(
                    path, Path(scratch), settings.device, settings.precision, feeds
                )
        report = _report(outcome, request)
        if validation.errors:
            report.notes.append(
                f"the converted IR has {len(validation.errors)} validation error(s)"
            )
        report.warnings.extend(loops_never_run(conversion.loops, trace, generated))
        if not report.ok:
            with timed("divergence located"):
                report.divergence = locate(
                    source, conversion, trace, feeds, _settled(request, report), scratch
                )
    return report


def _check_ir(path: Path, given: dict, request: _Request) -> CheckReport:
    from ov_loops.reference.ir_reference import Trace, run_ir

    settings = request.settings
    validation = validate(path)
    model = _core_read(path)
    request.require_outputs([output.get_any_name() for output in model.outputs])
    feeds, _ = request.feeds(ir_input_specs(model), given)
    trace = Trace()
    try:
        with timed("IR reference ran"):
            computed = run_ir(path, feeds, max_iterations=settings.max_iterations, trace=trace)
    except OvLoopsError as exc:
        raise InputError(str(exc)) from None
    with timed(f"compiled and ran on {settings.device}"):
        device = run_on_device(path, settings.device, settings.precision, feeds)
    expected = []
    for output in model.outputs:
        want = next((computed[n] for n in output.get_names() if n in computed), None)
        if want is None:
            raise InputError(f"IR reference: no value for output '{output.get_any_name()}'")
        expected.append(want)
    names = [output.get_any_name() for output in model.outputs]
    outcome = _Outcome(path, "IR reference (numpy)", names, expected, device)
    outcome.others["onnxruntime"] = IR_NOT_FOR_ONNXRUNTIME
    report = _report(outcome, request)
    if validation.errors:
        report.notes.append(
            f"the IR has {len(validation.errors)} validation error(s): run ov-loops validate"
        )
    if not report.ok:
        with timed("divergence located"):
            report.divergence = locate_ir(model, trace, feeds, _settled(request, report))
    return report


def _core_read(path: Path) -> ov.Model:
    try:
        return core().read_model(str(path))
    except RuntimeError as exc:
        detail = message_line(exc, last=True)
        raise InputError(f"{path}: OpenVINO cannot read it: {detail}") from None
