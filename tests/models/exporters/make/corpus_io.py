"""Write one corpus model: the .onnx, its inputs and the framework's outputs, its manifest entry.

Shared by the make scripts (each runs in its exporter's own venv, which has numpy, onnx and
onnxruntime). `save_model` writes NAME.onnx, NAME.inputs.npz, NAME.expected.npz (and the
second set when given), runs onnxruntime on every set and records the largest difference from
the framework's outputs; `write_manifest` merges one script's entries into manifest.json
(entries of other scripts are kept; the file is sorted by name, so reruns are stable).
"""

from __future__ import annotations

import json
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

CORPUS = Path(__file__).resolve().parent.parent
MANIFEST = CORPUS / "manifest.json"
SEQUENCE_OPS = {
    "SequenceEmpty",
    "SequenceConstruct",
    "SequenceInsert",
    "SequenceAt",
    "SequenceErase",
    "SequenceLength",
    "ConcatFromSequence",
    "SplitToSequence",
    "SequenceMap",
}


def loop_ops(graph: onnx.GraphProto, depth: int = 1) -> dict:
    """Count Loop/Scan/If nodes at every depth of `graph` and its bodies; depth 1 = main graph."""
    counts = {"Loop": 0, "Scan": 0, "If": 0, "max_loop_depth": 0, "sequence_ops": 0}
    for node in graph.node:
        if node.op_type in ("Loop", "Scan"):
            counts[node.op_type] += 1
            counts["max_loop_depth"] = max(counts["max_loop_depth"], depth)
        elif node.op_type == "If":
            counts["If"] += 1
        if node.op_type in SEQUENCE_OPS:
            counts["sequence_ops"] += 1
        for attr in node.attribute:
            bodies = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            inner_depth = depth + 1 if node.op_type in ("Loop", "Scan") else depth
            for body in bodies:
                inner = loop_ops(body, inner_depth)
                for key in ("Loop", "Scan", "If", "sequence_ops"):
                    counts[key] += inner[key]
                counts["max_loop_depth"] = max(counts["max_loop_depth"], inner["max_loop_depth"])
    return counts


def model_loop_ops(model: onnx.ModelProto) -> dict:
    """`loop_ops` of the main graph, plus those inside the model's local functions (if any)."""
    counts = loop_ops(model.graph)
    if model.functions:
        inner = [loop_ops(onnx.helper.make_graph(f.node, f.name, [], [])) for f in model.functions]
        counts["in_functions"] = {k: sum(c[k] for c in inner) for k in ("Loop", "Scan", "If")}
    return counts


def _dims(value: onnx.ValueInfoProto) -> list | None:
    """A value's dims as declared: ints, dim_param names, "?" if unnamed; None: no shape."""
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    return [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tensor.shape.dim
    ]


def input_dims(model: onnx.ModelProto) -> dict:
    """Each graph input's dims as exported (initializers listed as inputs left out)."""
    initializers = {i.name for i in model.graph.initializer}
    return {v.name: _dims(v) for v in model.graph.input if v.name not in initializers}


def output_dims(model: onnx.ModelProto) -> dict:
    """Each graph output's dims as exported."""
    return {v.name: _dims(v) for v in model.graph.output}


def _close(have: np.ndarray, want: np.ndarray) -> bool:
    if want.dtype.kind in "biu":
        return bool(np.array_equal(have, want))
    tol = 1e-9 if want.dtype == np.float64 else 1e-4
    return bool(np.allclose(have, want, rtol=tol, atol=tol, equal_nan=True))


def _ort_error(path: Path, inputs: dict, expected: dict) -> tuple[bool, float | None, str | None]:
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        got = dict(zip(names, session.run(None, inputs)))
    except Exception as error:  # noqa: BLE001 -- recorded, the corpus keeps the model
        return False, None, f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"
    worst = 0.0
    for name, want in expected.items():
        have = np.asarray(got[name])
        if have.shape != want.shape:
            return True, None, f"output {name}: shape {have.shape} != framework {want.shape}"
        if want.size:
            diff = np.abs(have.astype(np.float64) - want.astype(np.float64))
            worst = max(worst, float(np.nanmax(diff)) if diff.size else 0.0)
        if not _close(have, want):
            return (
                True,
                worst,
                f"output {name} differs from the framework (max abs err {worst:.3g})",
            )
    return True, worst, None


def _tolerance(expected: dict) -> dict:
    hints = {}
    for name, value in expected.items():
        kind = np.asarray(value).dtype
        if kind == np.float64:
            hints[name] = "f64"
        elif kind.kind == "f":
            hints[name] = "f32" if kind == np.float32 else str(kind)
        elif kind == np.bool_:
            hints[name] = "bool"
        else:
            hints[name] = "int"
    return hints


@dataclass(frozen=True)
class About:
    """What a manifest entry says of a model's origin and purpose (README.md: the fields)."""

    exporter: str
    framework: str
    source: str
    exercises: str
    time_axis: dict | None = None
    rnn_like: bool = False
    notes: str | None = None


def _onnxruntime(path: Path, sets: list[dict], results: list[dict]) -> dict:
    """onnxruntime's verdict per set: runs, matches, max_abs_err, error (suffix 2: set 2)."""
    verdict = {}
    for suffix, inputs, expected in zip(("", "2"), sets, results):
        runs, err, why = _ort_error(path, inputs, expected)
        verdict.update(
            {
                f"runs{suffix}": runs,
                f"matches{suffix}": runs and why is None,
                f"max_abs_err{suffix}": err,
                f"error{suffix}": why,
            }
        )
    return verdict


def save_model(
    name: str, model: onnx.ModelProto, sets: list[dict], results: list[dict], about: About
) -> dict:
    """Write NAME.onnx, NAME.inputs.npz/expected.npz (and the 2 files for a second set);
    return its manifest entry, with onnxruntime's errors against the framework.

    `sets[k]` maps the graph's input names to values, `results[k]` its output names to the
    framework's outputs for them.
    """
    path = CORPUS / f"{name}.onnx"
    onnx.save(model, str(path))
    graph_inputs = sorted(input_dims(model))
    graph_outputs = sorted(o.name for o in model.graph.output)
    for suffix, inputs, expected in zip(("", "2"), sets, results):
        assert sorted(inputs) == graph_inputs, (name, sorted(inputs), graph_inputs)
        assert sorted(expected) == graph_outputs, (name, sorted(expected), graph_outputs)
        np.savez(CORPUS / f"{name}.inputs{suffix}.npz", **inputs)
        np.savez(CORPUS / f"{name}.expected{suffix}.npz", **expected)
    opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    entry = {
        "name": name,
        "exporter": about.exporter,
        "framework": about.framework,
        "source": about.source,
        "opset": opsets.get("ai.onnx"),
        "opset_imports": opsets,
        "exercises": about.exercises,
        "loops": model_loop_ops(model),
        "input_dims": input_dims(model),
        "output_dims": output_dims(model),
        "time_axis": about.time_axis,
        "rnn_like": about.rnn_like,
        "second_set": len(sets) > 1,
        "onnxruntime": _onnxruntime(path, sets, results),
        "tolerance": _tolerance(results[0]),
        "size_bytes": path.stat().st_size,
    }
    if about.notes:
        entry["notes"] = about.notes
    print(f"{name}: {entry['loops']} onnxruntime {entry['onnxruntime']}", file=sys.stderr)
    return entry


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0][:300] if text else ''}"


def record_failure(name: str, source: str, error: BaseException) -> dict:
    """The manifest's record of an export that failed: the error and the first cause it names."""
    line = _first_line(error)
    cause = error.__cause__ or error.__context__
    if cause is not None:
        line += f" (caused by {_first_line(cause)})"
    print(f"{name}: EXPORT FAILED {line}", file=sys.stderr)
    return {"name": name, "source": source, "error": line}


def rand(seed: int, *shape: int, scale: float = 1.0) -> np.ndarray:
    """Deterministic float32 normal samples."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


class Registry:
    """The model functions of one make script, in order; `main()` runs them (or those named on
    the command line, then manifest.json is left alone) and records every export failure."""

    def __init__(self, script: str, exporter: str, framework: str) -> None:
        self.script = script
        self.exporter = exporter
        self.framework = framework
        self.functions = []

    def __call__(self, function):
        self.functions.append(function)
        return function

    def save(
        self,
        name: str,
        model: onnx.ModelProto,
        sets: list[dict],
        results: list[dict],
        exercises: str,
        *,
        exporter: str | None = None,
        **about,
    ) -> dict:
        """`save_model` with this script's exporter (or `exporter`), framework and source;
        `about`: time_axis, rnn_like, notes."""
        source = f"{self.script}:{name}"
        whom = About(exporter or self.exporter, self.framework, source, exercises, **about)
        return save_model(name, model, sets, results, whom)

    def main(self) -> None:
        only = set(sys.argv[1:])
        entries, failures = [], []
        for function in self.functions:
            if only and function.__name__ not in only:
                continue
            try:
                entries.append(function())
            except Exception as error:  # noqa: BLE001 -- an export that fails is recorded
                traceback.print_exc(limit=3)
                source = f"{self.script}:{function.__name__}"
                failures.append(record_failure(function.__name__, source, error))
        if not only:
            write_manifest(self.script, entries, failures)


def write_manifest(script: str, entries: list[dict], failures: list[dict]) -> None:
    """Replace `script`'s entries in manifest.json by `entries`; record its export failures."""
    data = {"models": [], "export_failures": []}
    if MANIFEST.exists():
        data = json.loads(MANIFEST.read_text())
    keep = [m for m in data["models"] if not m["source"].startswith(script + ":")]
    data["models"] = sorted(keep + entries, key=lambda m: m["name"])
    keep_fail = [
        f for f in data.get("export_failures", []) if not f["source"].startswith(script + ":")
    ]
    data["export_failures"] = sorted(keep_fail + failures, key=lambda f: f["name"])
    MANIFEST.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
