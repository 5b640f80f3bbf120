"""Tolerances of a check: by the precision an output was computed in, loosened for weights
stored as f16 (`F16_WEIGHTS`), overridable globally or per output (`--rtol 1e-3`,
`--atol out=1e-2`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ov_loops.errors import InputError

# (rtol, atol) by the precision a float output is computed in: a few units in the last place
# of each format, loosened for the error a loop accumulates over its iterations.
FLOAT_DEFAULTS = {
    "f64": (1e-7, 1e-9),
    "f32": (1e-4, 1e-5),
    "f16": (5e-3, 1e-3),
    "bf16": (4e-2, 1e-2),
}
F16_WEIGHTS = 2.0**-9  # see f16_weights_tolerance
_WIDTH = {"bf16": 8, "f16": 11, "f32": 24, "f64": 53}  # significand bits: narrower is less precise
_NUMPY_NAMES = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16"}


def f16_weights_tolerance(scale: float) -> tuple[float, float]:
    """(rtol, atol) of an output computed from weights stored as f16 (`compress_to_fp16`)
    compared with one computed from the f32 weights, `scale` being the output's max|expected|:
    (F16_WEIGHTS, F16_WEIGHTS * scale), F16_WEIGHTS = 2**-9.

    Rounding a weight w to f16 (11 significant bits, round to nearest) stores w * (1 + d) with
    |d| <= u = 2**-11 (subnormals, below 6.1e-5, lose at most 2**-25 absolutely: negligible
    here). An output y = sum_i w_i * x_i then moves by sum_i d_i * w_i * x_i, at most
    u * sum_i |w_i * x_i|: u * |y| when the terms do not cancel, but up to the size of the terms
    themselves for an element where they do. So the error is relative to the output's magnitude,
    not to each element: atol = F16_WEIGHTS * max|expected|, beside rtol = F16_WEIGHTS for large
    elements. Through a loop the rounding enters every iteration and is carried on; a
    contracting recurrence (the usual RNN: tanh, sigmoid, |Jacobian| < 1) keeps it bounded.
    Measured against onnxruntime (CPU, f32 inference, OpenVINO 2026.4.1), the largest error over
    max|expected|: ir_samples/rnn_scan.onnx and rnn_loop.onnx at 12, 100, 1000 steps 2.7 u; the
    PyTorch exports of benchmarks/models 0.7 u; benchmarks/loop_models.py's rnn, gru, lstm
    cells (H 64 and 256, 100 and 1000 steps) 2.84 u (rnn, H 256, 1000 steps; gru and lstm at
    most 1.7 u). Four units, 2**-9 = 1.95e-3, cover that (the worst element uses 0.66 of its
    tolerance); far above f32's 1e-4/1e-5, far below what a wrong loop gives (errors of the
    size of the output). A diverging recurrence amplifies any rounding, f32's as well: there,
    give --rtol/--atol, or convert with --compress_to_fp16=False.
    """
    return F16_WEIGHTS, F16_WEIGHTS * scale


def element_precision(dtype: np.dtype | str) -> str:
    """ "f64", "f32", "f16" or "bf16" for a float type (other floats, such as float8, count as
    bf16), "exact" for integers and booleans."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or np.issubdtype(dtype, np.integer):
        return "exact"
    return _NUMPY_NAMES.get(dtype.name, "bf16")


def computed_precision(dtype: np.dtype | str, inference: str | None) -> str:
    """The precision an output of type `dtype` is computed in when the device infers in
    `inference` (OpenVINO's INFERENCE_PRECISION_HINT, e.g. "f32", "bf16"; None: unknown):
    the narrower of the two for floats, "exact" for integers and booleans."""
    own = element_precision(dtype)
    if own == "exact" or inference not in _WIDTH:
        return own
    return min(own, inference, key=_WIDTH.__getitem__)


@dataclass(frozen=True)
class Tolerance:
    """What an output was compared with: |got - want| <= atol + rtol * |want|; `precision` is
    the precision it was computed in ("exact": integers and booleans, rtol = atol = 0);
    `source` says where the numbers came from ("default", "f16 weights", "--rtol/--atol", or
    the output's own "--rtol/--atol NAME=")."""

    rtol: float
    atol: float
    precision: str
    source: str = "default"

    def text(self) -> str:
        """ "exact", or "RTOL/ATOL" (1e-4/1e-5)."""
        if self.rtol == self.atol == 0:
            return "exact"
        return f"{_short(self.rtol)}/{_short(self.atol)}"


def _short(value: float) -> str:
    if value == 0 or 1e-2 <= value < 1e4:
        return f"{value:g}"
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


@dataclass(frozen=True)
class Tolerances:
    """Global overrides of the float defaults (integers and booleans stay exact) and per-output
    overrides (any element type)."""

    rtol: float | None = None
    atol: float | None = None
    output_rtol: dict[str, float] = field(default_factory=dict)
    output_atol: dict[str, float] = field(default_factory=dict)

    def for_output(
        self,
        name: str,
        dtype: np.dtype | str,
        inference: str | None,
        weights_scale: float | None = None,
    ) -> Tolerance:
        """The tolerance of output `name` of type `dtype` computed at `inference` precision;
        `weights_scale` (max|expected|) when one side of the comparison computed it from
        weights stored as f16 and the other from f32 weights.

        Pseudo-code::

            precision = narrower(element type of dtype, inference)   # "exact" for ints/bools
            rtol, atol = (0, 0) if precision == "exact" else FLOAT_DEFAULTS[precision]
            if float and weights_scale is not None:                   # source "f16 weights"
                rtol, atol = max(rtol, F16_WEIGHTS), max(atol, F16_WEIGHTS * weights_scale)
            if float: rtol, atol = global --rtol/--atol where given
            rtol, atol = --rtol NAME= / --atol NAME= where given
        """
        precision = computed_precision(dtype, inference)
        rtol, atol = FLOAT_DEFAULTS.get(precision, (0.0, 0.0))
        source = "default"
        if precision != "exact" and weights_scale is not None:
            loose_rtol, loose_atol = f16_weights_tolerance(weights_scale)
            rtol, atol = max(rtol, loose_rtol), max(atol, loose_atol)
            source = "f16 weights"
        if precision != "exact" and (self.rtol is not None or self.atol is not None):
            rtol = rtol if self.rtol is None else self.rtol
            atol = atol if self.atol is None else self.atol
            source = "--rtol/--atol"
        if name in self.output_rtol or name in self.output_atol:
            rtol = self.output_rtol.get(name, rtol)
            atol = self.output_atol.get(name, atol)
            source = f"--rtol/--atol {name}="
        return Tolerance(rtol, atol, precision, source)

    def require_outputs(self, names: Iterable[str]) -> None:
        """Per-output overrides must name outputs of the model."""
        known = list(names)
        unknown = sorted((set(self.output_rtol) | set(self.output_atol)) - set(known))
        if unknown:
            raise InputError(
                f"--rtol/--atol: not an output of the model: {', '.join(unknown)}; the model's "
                f"outputs: {', '.join(known) or 'none'}"
            )


def parse_tolerances(
    rtol: Iterable[str | float] | float | None, atol: Iterable[str | float] | float | None
) -> Tolerances:
    """Tolerances from `--rtol`/`--atol` values: each a number (global) or NAME=NUMBER (that
    output); numbers are finite and non-negative, a name given twice is an error."""
    found: dict[str, tuple[float | None, dict[str, float]]] = {}
    for option, items in (("--rtol", rtol), ("--atol", atol)):
        if items is None or isinstance(items, (int, float)):
            items = [] if items is None else [items]
        general: float | None = None
        named: dict[str, float] = {}
        for item in items:
            name, value = _split(option, item)
            if name is None:
                general = value
            elif name in named:
                raise InputError(f"{option} {item}: output '{name}' given twice")
            else:
                named[name] = value
        found[option] = (general, named)
    (rtol_all, rtol_named), (atol_all, atol_named) = found["--rtol"], found["--atol"]
    return Tolerances(rtol_all, atol_all, rtol_named, atol_named)


def _split(option: str, item: str | float) -> tuple[str | None, float]:
    name, equals, text = str(item).rpartition("=")
    if equals and not name:
        raise InputError(f"{option} {item}: expected a number or NAME=NUMBER")
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{option} {item}: expected a number or NAME=NUMBER") from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{option} {item}: the tolerance must be finite and non-negative")
    return (name if equals else None), value


def magnitude(values: np.ndarray) -> float:
    """max|values| over the finite elements (0 when there are none): the scale of an output,
    for the atol of `F16_WEIGHTS`."""
    with np.errstate(all="ignore"):
        absolute = np.abs(np.asarray(values).astype(np.float64)).ravel()
    finite = absolute[np.isfinite(absolute)]
    return float(finite.max()) if finite.size else 0.0
