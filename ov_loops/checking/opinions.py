"""Second opinions on a check: onnxruntime's outputs, `openvino.convert_model`'s IR run on the
same device, and outputs saved earlier (`--load-outputs`), each compared output by output."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import onnx

from ov_loops.checking.device import convert_isolated, run_isolated
from ov_loops.checking.diff import diff
from ov_loops.checking.report import Opinion
from ov_loops.checking.settings import Settings
from ov_loops.checking.tolerance import Tolerance
from ov_loops.errors import InputError, message_line

log = logging.getLogger(__name__)

AGAINST_CHOICES = ("convert-model",)


def opinion(
    name: str,
    outputs: list[np.ndarray] | str,
    names: list[str],
    want: list[np.ndarray],
    tolerances: list[Tolerance],
    against: str = "reference",
) -> Opinion:
    """`outputs` compared with `want` output by output at each output's tolerance (kept in the
    opinion), as the opinion `name`; skipped when `outputs` is the reason there are none, or
    their count differs."""
    if isinstance(outputs, str):
        log.info("%s skipped: %s", name, outputs)
        return Opinion(name, against, skipped=outputs)
    if len(outputs) != len(want):
        return Opinion(name, against, skipped=f"{len(outputs)} outputs, the model has {len(want)}")
    rows = [
        diff(output, expected, got, tolerance.rtol, tolerance.atol)
        for output, expected, got, tolerance in zip(names, want, outputs, tolerances)
    ]
    return Opinion(name, against, rows, tolerances=list(tolerances))


def onnxruntime_outputs(source: onnx.ModelProto, feeds: dict) -> list[np.ndarray] | str:
    """onnxruntime's outputs on the CPU, or why there are none."""
    try:
        import onnxruntime
    except ImportError:
        return "onnxruntime is not installed (pip install onnxruntime)"
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # its warnings would be stray lines on our stderr
    try:
        session = onnxruntime.InferenceSession(
            source.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime rejects some valid models (e.g. untyped bodies)
        return f"onnxruntime refuses the model: {_reason(exc)}"
    try:
        return session.run(None, feeds)
    except Exception as exc:
        return f"onnxruntime fails to run it: {_reason(exc)}"


def convert_model_outputs(
    onnx_path: Path, scratch: Path, settings: Settings, feeds: dict
) -> list[np.ndarray] | str:
    """The outputs of `openvino.convert_model`'s IR of the model on the settings' device, or why
    there are none (its conversion or run failed or crashed: both run in the device worker)."""
    xml = scratch / "convert_model.xml"
    try:
        convert_isolated(onnx_path, xml, settings.timeout)
    except InputError as exc:
        return str(exc)
    try:
        return run_isolated(xml, settings.device, settings.precision, feeds, settings.timeout)
    except InputError as exc:
        return f"its IR does not run: {exc}"


def _reason(exc: Exception) -> str:
    return message_line(exc, last=True) or type(exc).__name__


def require_against(against: tuple[str, ...] | list[str], is_onnx: bool) -> None:
    unknown = sorted(set(against) - set(AGAINST_CHOICES))
    if unknown:
        raise InputError(
            f"--against: unknown {', '.join(unknown)}; choose from {', '.join(AGAINST_CHOICES)}"
        )
    if against and not is_onnx:
        raise InputError("--against convert-model needs an ONNX model (it converts the .onnx)")
