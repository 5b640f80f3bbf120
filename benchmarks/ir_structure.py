"""Snapshot the structure of every IR the converter emits on a corpus, and compare snapshots.

    python -m benchmarks.ir_structure snapshot OUT.json
    python -m benchmarks.ir_structure compare A.json B.json

`snapshot` converts each model of benchmarks/structure_corpus.py with `ov_loops.translate`
(optimize="none": the translation, not the optimisations) and
records: the layer-type histogram of the converted model, counted into every Loop, If and
TensorIterator body (keys are paths such as `Loop-opset5.body/Add-opset1`); the inputs and
outputs (names, element type, shape); the loops reported (`repr` of each LoopSpec, or why the
loop was folded); the LoopSpecs read back from the saved IR by `ov_loops.ir.reader`; or the
one-line error when conversion is refused. Builder-made models get the histogram, signature and
read-back LoopSpecs. `compare` prints each model whose records differ, then
"N models, M identical"; exit status 1 if any differ. `snapshot` runs with PYTHONHASHSEED=0
(it restarts itself so): some refusals list their reasons in set order, which string hashing
would otherwise shuffle from run to run.

To snapshot another checkout, put it first on the path and run this file by path:

    PYTHONPATH=/path/to/old/tree python benchmarks/ir_structure.py snapshot old.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

import openvino as ov

import ov_loops
from ov_loops.ir.reader import loop_spec, loops, read_ir

if __package__:
    from benchmarks import structure_corpus
else:  # run by path: this directory is sys.path[0], the tree under test comes after it
    import structure_corpus


def body_graphs(op: ov.Node) -> list[tuple[str, ov.Model]]:
    """The bodies of a Loop, TensorIterator or If, labelled; none for other ops."""
    kind = op.get_type_name()
    if kind == "If":
        return [("then", op.get_then_body()), ("else", op.get_else_body())]
    if kind in ("Loop", "TensorIterator"):
        return [("body", op.get_function())]
    return []


def layer_histogram(model: ov.Model, prefix: str = "") -> Counter:
    """How many ops of each type and version, keyed by their path through the bodies."""
    counts: Counter = Counter()
    for op in model.get_ordered_ops():
        kind = f"{op.get_type_name()}-{op.get_type_info().version_id}"
        counts[prefix + kind] += 1
        for label, body in body_graphs(op):
            counts.update(layer_histogram(body, f"{prefix}{kind}.{label}/"))
    return counts


def signature(model: ov.Model) -> list[str]:
    """One line per input, then per output: its names, element type and partial shape."""
    ends = [("in", port) for port in model.inputs] + [("out", port) for port in model.outputs]
    return [
        f"{side} {','.join(sorted(port.get_names()))}: {port.get_element_type()} "
        f"{port.get_partial_shape()}"
        for side, port in ends
    ]


def reported_loops(conversion: ov_loops.Conversion) -> list[str]:
    """What the conversion says became of each ONNX loop, outermost first."""
    return [
        f"{loop.path} {loop.op}: "
        + (repr(loop.spec) if loop.spec is not None else f"folded ({loop.folded})")
        for loop in conversion.loops
    ]


def read_back_loops(model: ov.Model) -> list[str]:
    """Save the model with ov_loops.save and read each loop's LoopSpec back from the IR."""
    with tempfile.TemporaryDirectory(prefix="ir-structure-") as scratch:
        xml = Path(scratch) / "model.xml"
        ov_loops.save(model, xml, compress_to_fp16=False)
        document = read_ir(xml)
        return [
            f"{path}: {loop_spec(document, graph, layer)!r}"
            for path, graph, layer in loops(document)
        ]


def one_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


def model_record(model: ov.Model) -> dict:
    record = {"histogram": dict(sorted(layer_histogram(model).items()))}
    record["signature"] = signature(model)
    try:
        record["ir_loops"] = read_back_loops(model)
    except Exception as exc:  # a failure to save or read back is behaviour too
        record["ir_error"] = one_line(exc)
    return record


def onnx_record(build) -> dict:
    """The record of one ONNX model: its conversion's structure, or the refusal."""
    try:
        conversion = structure_corpus.translate_unoptimized(build())
    except Exception as exc:  # refusals (and crashes) are part of the behaviour compared
        return {"error": one_line(exc)}
    return {**model_record(conversion.model), "loops": reported_loops(conversion)}


def builder_record(build) -> dict:
    try:
        return model_record(build())
    except Exception as exc:
        return {"error": one_line(exc)}


def snapshot() -> dict[str, dict]:
    """The record of every model of the corpus, by name."""
    records = {
        name: onnx_record(build) for name, build in sorted(structure_corpus.onnx_corpus().items())
    }
    for name, build in sorted(structure_corpus.builder_corpus().items()):
        records[name] = builder_record(build)
    return records


def differences(old: dict, new: dict) -> list[str]:
    """Lines saying how two records of one model differ; empty when they are the same."""
    lines = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            for kind in sorted(set(before) | set(after)):
                if before.get(kind, 0) != after.get(kind, 0):
                    lines.append(f"{key} {kind}: {before.get(kind, 0)} -> {after.get(kind, 0)}")
        elif isinstance(before, list) and isinstance(after, list):
            lines += [f"{key} - {entry}" for entry in before if entry not in after]
            lines += [f"{key} + {entry}" for entry in after if entry not in before]
            if before != after and sorted(before) == sorted(after):
                lines.append(f"{key}: same entries, another order")
        else:
            lines.append(f"{key}: {before!r} -> {after!r}")
    return lines


def compare(old: dict[str, dict], new: dict[str, dict]) -> int:
    """Print each model whose records differ and the total line; 1 if any differ."""
    names = sorted(set(old) | set(new))
    identical = 0
    for name in names:
        if name not in old or name not in new:
            print(f"{name}: only in {'the second' if name not in old else 'the first'} snapshot")
            continue
        lines = differences(old[name], new[name])
        if not lines:
            identical += 1
            continue
        print(f"{name}:")
        for line in lines:
            print(f"    {line}")
    print(f"{len(names)} models, {identical} identical")
    return 0 if identical == len(names) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("snapshot").add_argument("out", type=Path)
    comparing = commands.add_parser("compare")
    comparing.add_argument("old", type=Path)
    comparing.add_argument("new", type=Path)
    args = parser.parse_args(argv)
    if args.command == "compare":
        return compare(json.loads(args.old.read_text()), json.loads(args.new.read_text()))
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, sys.orig_argv, {**os.environ, "PYTHONHASHSEED": "0"})
    records = snapshot()
    args.out.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")
    refused = sum("error" in record for record in records.values())
    print(f"{len(records)} models ({refused} refused) from {Path(ov_loops.__file__).parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
