"""What a check found: per output its comparison with the reference and the tolerance used,
second opinions (onnxruntime, openvino.convert_model, saved outputs), warnings, the first
divergence; as text lines or as JSON (`CHECK_JSON_KEYS` lists the schema)."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line imports this module for its schema: keep it light
    from ov_loops.checking.diff import OutputDiff
    from ov_loops.checking.divergence import Divergence
    from ov_loops.checking.tolerance import Tolerance
    from ov_loops.convert_options import ConvertOptions

SCHEMA = "ov-loops-check/1"
CHECK_JSON_KEYS = """\
schema "ov-loops-check/1"; model; device; precision {requested, inferred}; reference;
verdict "MATCH"|"MISMATCH"; exit_code; outputs [{name, shape, dtype, computed_in, rtol, atol,
tolerance_source ("default", "f16 weights", "--rtol/--atol", "--rtol/--atol NAME="),
max_abs_error, max_rel_error, mismatches, note, ok, opinions {NAME: {ok, mismatches,
max_abs_error, max_rel_error, note, rtol, atol, tolerance_source} or null}}]; opinions [{name,
against, status "compared"|"skipped", reason, ok, decides}]; chunks (null or {input, axis,
lengths, outputs {NAME: "last chunk"|"concatenated along axis K"}}); conversion (null for an IR,
else the options the .onnx was converted with: {optimize, input, target, unroll, stateful,
compress_to_fp16}); f16_weights (the IR's constants stored as f16); rounded_weights (how many
of them f16 rounded: all, for an IR); divergence (null or {text, ...}); notes; hints; warnings.
Non-finite numbers are the strings "inf", "-inf", "nan"."""


@dataclass
class Opinion:
    """A second opinion: another source's outputs compared with `against` ("reference": the
    numpy reference, "device": the device's outputs), in output order, each at its tolerance;
    or why it was skipped. A deciding opinion (saved outputs) counts for the verdict."""

    name: str
    against: str
    rows: list[OutputDiff] | None = None
    skipped: str | None = None
    decides: bool = False
    tolerances: list[Tolerance] = field(default_factory=list)  # each row's

    @property
    def ok(self) -> bool | None:
        return None if self.rows is None else all(row.ok for row in self.rows)

    def cell(self, index: int) -> str:
        if self.rows is None:
            return "-"
        row = self.rows[index]
        if row.note:
            return "shape"
        return "ok" if row.ok else f"{row.mismatches} differ"

    def line(self) -> str:
        if self.rows is None:
            return f"{self.name}: skipped: {self.skipped}"
        worst = max((row.max_abs_error for row in self.rows), default=0.0)
        if self.ok:
            return (
                f"{self.name} vs the {self.against}: agrees on all {len(self.rows)} output(s) "
                f"(max abs err {worst:.3g})"
            )
        wrong = ", ".join(row.name for row in self.rows if not row.ok)
        return f"{self.name} vs the {self.against}: DISAGREES on {wrong} (max abs err {worst:.3g})"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "against": self.against,
            "status": "skipped" if self.rows is None else "compared",
            "reason": self.skipped,
            "ok": self.ok,
            "decides": self.decides,
        }


@dataclass
class CheckReport:
    """Per output: shape, dtype, the precision it was computed in and its tolerance, max abs /
    rel error, mismatching elements; second opinions; warnings; where it went wrong."""

    model: Path
    device: str
    precision: str
    rows: list[OutputDiff]
    reference: str
    tolerances: list[Tolerance] = field(default_factory=list)
    inferred: str | None = None
    opinions: list[Opinion] = field(default_factory=list)
    divergence: Divergence | None = None
    chunks: dict | None = None  # what `ov_loops.checking.chunks.describe` says: the chunks fed
    conversion: ConvertOptions | None = None  # how check converted the .onnx (None: an IR)
    f16_weights: int = 0  # the IR's constants stored as f16 (`ov_loops.checking.weights`)
    rounded_weights: int = 0  # how many of them f16 rounded (an IR's: all, originals unknown)
    notes: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    outputs: list = field(default_factory=list, repr=False)  # the device's, in output order

    @property
    def ok(self) -> bool:
        deciding = [o for o in self.opinions if o.decides and o.rows is not None]
        return all(row.ok for row in self.rows) and all(o.ok for o in deciding)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def verdict(self) -> str:
        return "MATCH" if self.ok else "MISMATCH"

    def lines(self) -> list[str]:
        precision = self.inferred or self.precision
        asked = "" if precision == self.precision else f" (--precision {self.precision})"
        lines = [
            f"{self.model} on {self.device}, inference precision {precision}{asked}, "
            f"against the {self.reference}",
            f"  {self._made()}",
        ]
        columns = [o for o in self.opinions if o.rows is not None]
        lines.append(
            f"  {'output':20} {'shape':14} {'dtype':9} {'computed':8} {'rtol/atol':11} "
            f"{'max abs err':>11} {'max rel err':>11} {'mismatches':>10}"
            + "".join(f" {o.name:>{_width(o)}}" for o in columns)
        )
        for index, (row, tolerance) in enumerate(zip(self.rows, self.tolerances)):
            lines.append(
                f"  {row.name[:20]:20} {str(list(row.shape))[:14]:14} {row.dtype:9} "
                f"{tolerance.precision:8} {tolerance.text():11} {row.max_abs_error:11.3g} "
                f"{row.max_rel_error:11.3g} {row.mismatches:10d}"
                + "".join(f" {o.cell(index):>{_width(o)}}" for o in columns)
                + (f"  {row.note}" if row.note else "")
            )
        lines.extend(f"  {opinion.line()}" for opinion in self.opinions)
        if self.chunks is not None:
            lines.extend(f"  {line}" for line in _chunks_lines(self.chunks))
        lines.extend(f"  note: {note}" for note in self.notes)
        lines.extend(f"  hint: {hint}" for hint in self.hints)
        lines.extend(f"  warning: {warning}" for warning in self.warnings)
        if self.divergence is not None:
            lines.append(f"  {self.divergence.text()}")
        suffix = f" ({len(self.warnings)} warning(s) above)" if self.warnings else ""
        lines.append(self.verdict + suffix)
        return lines

    def _made(self) -> str:
        """How the IR checked was made, and whether it stores weights as f16."""
        if self.conversion is None:
            made = "the IR as given (check converts only an .onnx)"
        else:
            made = f"converted with {self.conversion.spelled()}"
        if not self.f16_weights:
            return f"{made}: no weights stored as f16"
        rounded = "" if self.conversion is None else f", {self.rounded_weights} rounded"
        return f"{made}: weights stored as f16 ({self.f16_weights} constant(s){rounded})"

    def to_json(self) -> str:
        """The report as JSON (schema: `CHECK_JSON_KEYS`)."""
        return json.dumps(_finite(self._document()), indent=2)

    def _document(self) -> dict:
        return {
            "schema": SCHEMA,
            "model": str(self.model),
            "device": self.device,
            "precision": {"requested": self.precision, "inferred": self.inferred},
            "reference": self.reference,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "outputs": [self._output(i) for i in range(len(self.rows))],
            "opinions": [opinion.to_dict() for opinion in self.opinions],
            "chunks": self.chunks,
            "conversion": None if self.conversion is None else self.conversion.to_dict(),
            "f16_weights": self.f16_weights,
            "rounded_weights": self.rounded_weights,
            "divergence": _divergence(self.divergence),
            "notes": list(self.notes),
            "hints": list(self.hints),
            "warnings": list(self.warnings),
        }

    def _output(self, index: int) -> dict:
        row, tolerance = self.rows[index], self.tolerances[index]
        return {
            "name": row.name,
            "shape": list(row.shape),
            "dtype": row.dtype,
            "computed_in": tolerance.precision,
            **_tolerance_numbers(tolerance),
            **_diff_numbers(row),
            "opinions": {
                opinion.name: None
                if opinion.rows is None
                else {
                    **_diff_numbers(opinion.rows[index]),
                    **_tolerance_numbers(opinion.tolerances[index]),
                }
                for opinion in self.opinions
            },
        }


def _width(opinion: Opinion) -> int:
    """The width of an opinion's column: its name's, at least 13."""
    return max(13, len(opinion.name))


def _chunks_lines(chunks: dict) -> list[str]:
    """The chunks fed (`--chunks`) and how each output's chunks were combined."""
    joined = "; ".join(f"{name}: {how}" for name, how in chunks["outputs"].items())
    return [
        f"chunks: input {chunks['input']} split along axis {chunks['axis']} into lengths "
        f"{chunks['lengths']}, fed in order to one infer request, then reset_state() and the "
        "whole inputs once more",
        f"chunk outputs: {joined}",
    ]


def _tolerance_numbers(tolerance: Tolerance) -> dict:
    return {"rtol": tolerance.rtol, "atol": tolerance.atol, "tolerance_source": tolerance.source}


def _diff_numbers(row: OutputDiff) -> dict:
    return {
        "max_abs_error": row.max_abs_error,
        "max_rel_error": row.max_rel_error,
        "mismatches": row.mismatches,
        "note": row.note,
        "ok": row.ok,
    }


def _divergence(divergence: Divergence | None) -> dict | None:
    if divergence is None:
        return None
    fields = dataclasses.asdict(divergence) if dataclasses.is_dataclass(divergence) else {}
    return {"text": divergence.text(), **fields}


def _finite(value):
    """`value` with non-finite floats as strings (JSON has no infinities)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value
