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


def input_dims(model: onnx.ModelProto) -> dict:
    """Each graph input's dims as exported: ints, dim_param strings, or None (no shape/unknown)."""
    initializers = {i.name for i in model.graph.initializer}
    dims = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        if not tensor.HasField("shape"):
            dims[value.name] = None
            continue
        dims[value.name] = [
            d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in tensor.shape.dim
        ]
    return dims


def output_dims(model: onnx.ModelProto) -> dict:
    """Each graph output's dims as exported (as `input_dims`)."""
    dims = {}
    for value in model.graph.output:
        tensor = value.type.tensor_type
        if not tensor.HasField("shape"):
            dims[value.name] = None
            continue
        dims[value.name] = [
            d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in tensor.shape.dim
        ]
    return dims


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


def save_model(
    name: str,
    model: onnx.ModelProto | str | Path,
    inputs: dict,
    expected: dict,
    *,
    meta: dict,
    inputs2: dict | None = None,
    expected2: dict | None = None,
) -> dict:
    """Write NAME.onnx and its .npz files; return its manifest entry (with onnxruntime's errors).

    `expected` maps the ONNX graph's output names to the framework's outputs (in graph output
    order is not needed); `meta` holds exporter, framework, source, exercises, time_axis,
    rnn_like and notes.
    """
    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    path = CORPUS / f"{name}.onnx"
    onnx.save(model, str(path))
    graph_inputs = [i for i in input_dims(model)]
    graph_outputs = [o.name for o in model.graph.output]
    assert sorted(inputs) == sorted(graph_inputs), (name, sorted(inputs), graph_inputs)
    assert sorted(expected) == sorted(graph_outputs), (name, sorted(expected), graph_outputs)
    np.savez(CORPUS / f"{name}.inputs.npz", **inputs)
    np.savez(CORPUS / f"{name}.expected.npz", **expected)
    runs, err, why = _ort_error(path, inputs, expected)
    ort = {"runs": runs, "matches": runs and why is None, "max_abs_err": err, "error": why}
    if inputs2 is not None:
        np.savez(CORPUS / f"{name}.inputs2.npz", **inputs2)
        np.savez(CORPUS / f"{name}.expected2.npz", **expected2)
        runs2, err2, why2 = _ort_error(path, inputs2, expected2)
        ort.update(runs2=runs2, matches2=runs2 and why2 is None, max_abs_err2=err2, error2=why2)
    opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    entry = {
        "name": name,
        **{k: meta[k] for k in ("exporter", "framework", "source")},
        "opset": opsets.get("ai.onnx"),
        "opset_imports": opsets,
        "exercises": meta["exercises"],
        "loops": model_loop_ops(model),
        "input_dims": input_dims(model),
        "output_dims": output_dims(model),
        "time_axis": meta.get("time_axis"),
        "rnn_like": meta.get("rnn_like", False),
        "second_set": inputs2 is not None,
        "onnxruntime": ort,
        "tolerance": _tolerance(expected),
        "size_bytes": path.stat().st_size,
    }
    if meta.get("notes"):
        entry["notes"] = meta["notes"]
    status = "ok" if runs and why is None else f"ORT: {why}"
    print(f"{name}: {entry['loops']} ort err {err} {status}", file=sys.stderr)
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

    def __init__(self, script: str) -> None:
        self.script = script
        self.functions = []

    def __call__(self, function):
        self.functions.append(function)
        return function

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
