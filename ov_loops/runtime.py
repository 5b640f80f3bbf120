"""Compile on a device, run, and diff outputs against a reference."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov

from ov_loops.errors import InputError

_core: ov.Core | None = None


def core() -> ov.Core:
    global _core  # one Core per process: creating one loads every plugin
    if _core is None:
        _core = ov.Core()
    return _core


def available_devices() -> list[str]:
    return list(core().available_devices)


def compile_model(model: ov.Model | str, device: str, precision: str) -> ov.CompiledModel:
    """Compile on `device`; with precision "f32", ask for f32 inference where the device takes
    the hint (this CPU would otherwise compute in bf16). Absent devices are an InputError that
    lists the devices present."""
    present = available_devices()
    base = device.split(":")[0].split(".")[0]
    if base not in ("AUTO", "MULTI", "HETERO") and not any(
        d == device or d.split(".")[0] == base for d in present
    ):
        raise InputError(
            f"device {device} is not present; devices here: {', '.join(present) or 'none'}"
        )
    config = {}
    if precision == "f32" and _takes_precision_hint(base):
        config["INFERENCE_PRECISION_HINT"] = "f32"
    try:
        return core().compile_model(model, device, config)
    except RuntimeError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        raise InputError(f"cannot compile on {device}: {lines[-1] if lines else exc}") from None


def _takes_precision_hint(device: str) -> bool:
    if device in ("AUTO", "MULTI", "HETERO"):
        return True
    try:
        return "INFERENCE_PRECISION_HINT" in core().get_property(device, "SUPPORTED_PROPERTIES")
    except RuntimeError:
        return False


def to_tensor(array: np.ndarray) -> ov.Tensor:
    """An ov.Tensor of `array`; bfloat16 goes by its bits (OpenVINO's numpy view of bf16 is f16);
    0-d arrays stay 0-d."""
    array = np.asarray(array)
    shape = ov.Shape(list(array.shape))
    if array.dtype.name == "bfloat16":
        tensor = ov.Tensor(ov.Type.bf16, shape)
        tensor.data.view(np.uint16)[...] = array.view(np.uint16)
    else:
        tensor = ov.Tensor(ov.Type(array.dtype), shape)
        tensor.data[...] = array
    return tensor


def run(compiled: ov.CompiledModel, inputs: dict | list) -> list[np.ndarray]:
    """Run once; outputs as numpy arrays in output order (bf16 as ml_dtypes.bfloat16)."""
    request = compiled.create_infer_request()
    if isinstance(inputs, dict):
        request.infer({name: to_tensor(value) for name, value in inputs.items()})
    else:
        request.infer([to_tensor(value) for value in inputs])
    outputs = []
    for index in range(len(compiled.outputs)):
        tensor = request.get_output_tensor(index)
        data = np.array(tensor.data, copy=True)
        if tensor.element_type == ov.Type.bf16:
            import ml_dtypes

            data = data.view(np.uint16).view(ml_dtypes.bfloat16)
        outputs.append(data)
    return outputs


@dataclass(frozen=True)
class OutputDiff:
    """One output compared with its reference."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    max_abs_error: float
    max_rel_error: float
    mismatches: int
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and not self.note


def diff(name: str, expected: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> OutputDiff:
    """Element-wise comparison: |got - expected| <= atol + rtol * |expected| (NaN equals NaN)."""
    expected, got = np.asarray(expected), np.asarray(got)
    if expected.size == 0 and got.size == 0:
        return OutputDiff(name, got.shape, str(got.dtype), 0.0, 0.0, 0)
    if expected.shape != got.shape:
        return OutputDiff(
            name,
            got.shape,
            str(got.dtype),
            float("inf"),
            float("inf"),
            max(expected.size, got.size),
            f"shape differs from {expected.shape}",
        )
    if expected.dtype == np.bool_ or got.dtype == np.bool_:
        wrong = expected != got
        return OutputDiff(
            name,
            got.shape,
            str(got.dtype),
            float(wrong.any()),
            float(wrong.any()),
            int(wrong.sum()),
        )
    want = np.atleast_1d(expected.astype(np.float64))
    have = np.atleast_1d(got.astype(np.float64))
    error = np.abs(have - want)
    both_nan = np.isnan(want) & np.isnan(have)
    error[both_nan] = 0.0
    relative = error / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
    wrong = ~(error <= atol + rtol * np.abs(want)) & ~both_nan
    return OutputDiff(
        name,
        got.shape,
        str(got.dtype),
        float(np.nanmax(error)),
        float(np.nanmax(np.where(error == 0, 0.0, relative))),
        int(wrong.sum()),
    )
