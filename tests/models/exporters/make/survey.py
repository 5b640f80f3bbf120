"""Survey the exporter corpus with ov-loops and openvino.convert_model (openvino, onnxruntime).

For every model of manifest.json: `python -m ov_loops convert --optimize {none,default,max}`,
then compile each IR on CPU (INFERENCE_PRECISION_HINT=f32) and run it on NAME.inputs.npz (and
NAME.inputs2.npz), comparing with the framework's NAME.expected*.npz; the same for
`openvino.convert_model` on the ONNX file. For rnn_like models also `convert --stateful` (does
it convert, how many ReadValues) and, for those with a time axis, `ov_loops check --chunks`.
Each model runs in its own worker process (a plugin crash or hang costs one model).

    PYTHONPATH=<ov-loops tree> python tests/models/exporters/make/survey.py \\
        [--out /tmp/corpus_out] [--json survey.json] [--markdown survey.md] [NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np

CORPUS = Path(__file__).resolve().parent.parent
LEVELS = ("none", "default", "max")
WORKER_TIMEOUT = 3600


BOILERPLATE = (
    "Summary:",
    "Check 'false' failed",
    "FrontEnd API failed",
    "Model wasn't fully converted",
    "Failed operations detailed log",
    "-- Conversion is failed",
    "Traceback",
    "File ",
)


def _one_line(text: str) -> str:
    """The informative line of an error text (OpenVINO's frontend wraps it in boilerplate)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    kept = [ln for ln in lines if not ln.startswith(BOILERPLATE)]
    return (kept[-1] if kept else (lines[-1] if lines else ""))[:300]


def _tolerance(want: np.ndarray) -> tuple[float, float]:
    """rtol, atol for an output computed on CPU in f32 against the framework."""
    return (0.0, 0.0) if want.dtype.kind in "biu" else (1e-3, 1e-4)


def compare(got: dict, want: dict) -> dict:
    """Max abs error over the outputs and whether every output is within tolerance."""
    worst, ok, problems = 0.0, True, []
    for name, ref in want.items():
        if name not in got:
            return {"ok": False, "max_abs_err": None, "error": f"no output named {name}"}
        have = np.asarray(got[name])
        if have.shape != ref.shape:
            return {
                "ok": False,
                "max_abs_err": None,
                "error": f"output {name}: shape {have.shape}, expected {ref.shape}",
            }
        if ref.size == 0:
            continue
        err = float(np.nanmax(np.abs(have.astype(np.float64) - ref.astype(np.float64))))
        worst = max(worst, err)
        rtol, atol = _tolerance(ref)
        if not np.allclose(have, ref, rtol=rtol, atol=atol, equal_nan=True):
            ok = False
            problems.append(f"{name} err {err:.3g}")
    return {"ok": ok, "max_abs_err": worst, "error": "; ".join(problems) or None}


def _sets(name: str) -> list[tuple[dict, dict, dict | None]]:
    """(inputs, the framework's outputs, onnxruntime's outputs or None) per input set."""
    import onnxruntime as ort

    pairs = [("inputs", "expected"), ("inputs2", "expected2")]
    session = ort.InferenceSession(str(CORPUS / f"{name}.onnx"), providers=["CPUExecutionProvider"])
    sets = []
    for inputs_file, expected_file in pairs:
        if not (CORPUS / f"{name}.{inputs_file}.npz").exists():
            continue
        inputs = dict(np.load(CORPUS / f"{name}.{inputs_file}.npz"))
        try:
            names = [o.name for o in session.get_outputs()]
            reference = dict(zip(names, session.run(None, inputs)))
        except Exception:  # noqa: BLE001 -- onnxruntime cannot run it: no second opinion
            reference = None
        sets.append((inputs, dict(np.load(CORPUS / f"{name}.{expected_file}.npz")), reference))
    return sets


def run_model(model, sets: list) -> dict:
    """Compile `model` (an ov.Model) on CPU in f32 and compare each set; output partial shapes."""
    import openvino as ov

    core = ov.Core()
    shapes = {
        next(iter(o.get_names()), str(i)): str(o.get_partial_shape())
        for i, o in enumerate(model.outputs)
    }
    result = {"partial_shapes": shapes, "runs": False, "sets": []}
    try:
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    except Exception as error:  # noqa: BLE001 -- recorded
        result["error"] = "compile: " + _one_line(str(error))
        return result
    ports = {n: port for port in compiled.outputs for n in port.get_names()}
    for inputs, expected, reference in sets:
        try:
            request = compiled.create_infer_request()
            request.infer(inputs)
            got = {n: request.get_tensor(ports[n]).data.copy() for n in expected if n in ports}
        except Exception as error:  # noqa: BLE001 -- recorded
            result["sets"].append(
                {"ok": False, "max_abs_err": None, "error": "infer: " + _one_line(str(error))}
            )
            continue
        row = compare(got, expected)
        row["vs_onnxruntime"] = None if reference is None else compare(got, reference)
        result["sets"].append(row)
    result["runs"] = all(
        s.get("error") is None or not s["error"].startswith("infer:") for s in result["sets"]
    )
    return result


def cli(*argv: str) -> tuple[int, str, str]:
    """`python -m ov_loops ARGV`, run in this (worker) process: exit code, stdout, stderr."""
    from ov_loops.cli import main as ov_loops_main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = ov_loops_main(list(argv))
        except SystemExit as exit_:  # argparse
            code = exit_.code if isinstance(exit_.code, int) else 2
        except Exception as error:  # noqa: BLE001 -- a traceback is a finding too
            code = -1
            print(f"uncaught {type(error).__name__}: {error}", file=sys.stderr)
    return code, out.getvalue(), err.getvalue()


def _convert(onnx_path: Path, xml: Path, *extra: str) -> tuple[bool, str | None]:
    code, out, err = cli("convert", str(onnx_path), "-o", str(xml), "-q", *extra)
    if code != 0:
        return False, f"exit {code}: {_one_line(err or out)}"
    return True, None


def _stateful(name: str, entry: dict, out: Path) -> dict:
    import openvino as ov

    xml = out / "stateful.xml"
    converts, error = _convert(CORPUS / f"{name}.onnx", xml, "--stateful")
    result = {"converts": converts, "error": error, "read_values": None, "chunks": None}
    if converts:
        model = ov.Core().read_model(xml)
        result["read_values"] = sum(
            op.get_type_name() == "ReadValue" for op in model.get_ordered_ops()
        )
    for input_name, axis in (entry.get("time_axis") or {}).items():
        code, out, err = cli(
            "check",
            str(CORPUS / f"{name}.onnx"),
            "--inputs",
            str(CORPUS / f"{name}.inputs.npz"),
            "--chunks",
            f"{input_name}:{axis}=2",
            "--format",
            "json",
            "-q",
        )
        report = json.loads(out) if out.strip().startswith("{") else None
        verdict = report["verdict"] if report else None
        result["chunks"] = {
            "input": input_name,
            "axis": axis,
            "exit": code,
            "verdict": verdict,
            "error": None if verdict == "MATCH" else _chunk_problem(report, err),
        }
    return result


def _chunk_problem(report: dict | None, stderr: str) -> str:
    """Why `check --chunks` did not match: its no-state note, else the outputs that differ."""
    if report is None:
        return _one_line(stderr)
    notes = [n for n in report.get("notes", []) if "keeps no state" in n]
    wrong = [f"{o['name']} err {o['max_abs_error']}" for o in report["outputs"] if not o["ok"]]
    return notes[0] if notes else "; ".join(wrong)


def survey_one(name: str, out: Path) -> dict:
    """Everything measured for one model (run in a worker process)."""
    import openvino as ov

    entry = next(
        m for m in json.loads((CORPUS / "manifest.json").read_text())["models"] if m["name"] == name
    )
    out.mkdir(parents=True, exist_ok=True)
    sets = _sets(name)
    result = {"name": name, "levels": {}}
    for level in LEVELS:
        xml = out / f"{level}.xml"
        converts, error = _convert(
            CORPUS / f"{name}.onnx", xml, "--optimize", level, "--compress_to_fp16=False"
        )
        row = {"converts": converts, "error": error}
        if converts:
            row.update(run_model(ov.Core().read_model(xml), sets))
        result["levels"][level] = row
    xml = out / "default_fp16.xml"
    converts, error = _convert(CORPUS / f"{name}.onnx", xml)
    row = {"converts": converts, "error": error}
    if converts:
        row.update(run_model(ov.Core().read_model(xml), sets))
    result["default_fp16"] = row
    try:
        row = {"converts": True, "error": None}
        row.update(run_model(ov.convert_model(str(CORPUS / f"{name}.onnx")), sets))
    except Exception as error:  # noqa: BLE001 -- recorded
        row = {"converts": False, "error": _one_line(str(error))}
    result["convert_model"] = row
    if entry.get("rnn_like"):
        result["stateful"] = _stateful(name, entry, out)
    return result


def _worker(name: str, out: Path) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, "--out", str(out)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=WORKER_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"name": name, "crashed": "worker timeout"}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"name": name, "crashed": f"worker exit {done.returncode}: {_one_line(done.stderr)}"}
    return json.loads(lines[-1])


def status(row: dict) -> str:
    """ok, =ort (differs from the framework exactly as onnxruntime does: an exporter bug),
    WRONG, no run, no convert."""
    if not row.get("converts"):
        return "no convert"
    if not row.get("runs"):
        return "no run"
    sets = row["sets"]
    if all(s["ok"] for s in sets):
        return "ok"
    if all(s.get("vs_onnxruntime") and s["vs_onnxruntime"]["ok"] for s in sets):
        return "=ort"
    return "WRONG"


def _cell(row: dict) -> str:
    mark = status(row)
    errs = [s["max_abs_err"] for s in row.get("sets", []) if s["max_abs_err"] is not None]
    return f"{mark} {max(errs):.1e}" if errs and mark not in ("no convert", "no run") else mark


COLUMNS = (
    ("none", lambda r: r["levels"]["none"]),
    ("default", lambda r: r["levels"]["default"]),
    ("max", lambda r: r["levels"]["max"]),
    ("default, f16 weights", lambda r: r["default_fp16"]),
    ("convert_model", lambda r: r["convert_model"]),
)
STATUSES = ("ok", "=ort", "WRONG", "no run", "no convert")


def summary(results: list[dict]) -> str:
    """Counts per column, and of the --stateful runs."""
    done = [r for r in results if "crashed" not in r]
    lines = ["| column | " + " | ".join(STATUSES) + " |", "|---|" + "---|" * len(STATUSES)]
    for name, get in COLUMNS:
        counts = Counter(status(get(r)) for r in done)
        lines.append(f"| {name} | " + " | ".join(str(counts[k]) for k in STATUSES) + " |")
    stateful = [r["stateful"] for r in done if r.get("stateful")]
    chunks = Counter(
        c["verdict"] or f"exit {c['exit']}" for c in (s["chunks"] for s in stateful) if c
    )
    lines += [
        "",
        f"--stateful: {sum(s['converts'] for s in stateful)}/{len(stateful)} convert; "
        + "check --chunks: "
        + ", ".join(f"{v} {k}" for k, v in sorted(chunks.items())),
    ]
    crashed = [r["name"] for r in results if "crashed" in r]
    if crashed:
        lines.append("crashed workers: " + ", ".join(crashed))
    return "\n".join(lines) + "\n"


def _problem(row: dict, mark: str) -> str:
    if mark == "no convert":
        return row["error"]
    if mark == "no run":
        return row.get("error") or next((s["error"] for s in row["sets"] if s.get("error")), "")
    return "; ".join(s["error"] or "" for s in row["sets"] if not s["ok"])


def failures(results: list[dict]) -> str:
    """One line per failure: model, column, status, the error's one line."""
    out = []
    for r in results:
        if "crashed" in r:
            out.append(f"- {r['name']}: worker crashed: {r['crashed']}")
            continue
        for name, get in COLUMNS:
            mark = status(get(r))
            if mark not in ("ok", "=ort"):
                out.append(f"- {r['name']} [{name}] {mark}: {_problem(get(r), mark)}")
        st = r.get("stateful")
        if st and not st["converts"]:
            out.append(f"- {r['name']} [--stateful] no convert: {st['error']}")
        chunks = (st or {}).get("chunks")
        if chunks and chunks["verdict"] != "MATCH":
            verdict = chunks["verdict"] or f"exit {chunks['exit']}"
            where = f"{chunks['input']}:{chunks['axis']}=2"
            out.append(f"- {r['name']} [check --chunks {where}] {verdict}: {chunks['error']}")
    return "\n".join(out) + "\n"


def _row(r: dict) -> str:
    levels, cm = r["levels"], r["convert_model"]
    same = [
        levels[k].get("partial_shapes") == cm.get("partial_shapes")
        for k in LEVELS
        if levels[k].get("converts")
    ]
    shapes = "-" if not (cm.get("converts") and same) else ("yes" if all(same) else "NO")
    st = r.get("stateful")
    read_values = "-" if st is None else (str(st["read_values"]) if st["converts"] else "no")
    chunks = (st or {}).get("chunks")
    verdict = "-" if not chunks else (chunks["verdict"] or f"exit {chunks['exit']}")
    cells = [_cell(get(r)) for _, get in COLUMNS] + [shapes, read_values, verdict]
    return f"| {r['name']} | " + " | ".join(cells) + " |"


def markdown(results: list[dict]) -> str:
    """The main table: per model and column, status and max abs error against the framework."""
    head = [name for name, _ in COLUMNS] + ["shapes = convert_model's", "stateful RV", "chunks"]
    lines = ["| model | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    for r in results:
        if "crashed" in r:
            lines.append(f"| {r['name']} | CRASH: {r['crashed']} |" + " |" * (len(head) - 1))
        else:
            lines.append(_row(r))
    return "\n".join(lines) + "\n"


def report(results: list[dict]) -> str:
    """The table, the counts and the failures."""
    return markdown(results) + "\n" + summary(results) + "\n" + failures(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--out", default="/tmp/corpus_out")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--worker")
    parser.add_argument("--from-json", help="render --markdown from an earlier --json, run nothing")
    args = parser.parse_args()
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        if args.markdown:
            Path(args.markdown).write_text(report(results))
        else:
            print(report(results))
        return
    if args.worker:
        print(json.dumps(survey_one(args.worker, Path(args.out) / args.worker)))
        return
    names = args.names or [
        m["name"] for m in json.loads((CORPUS / "manifest.json").read_text())["models"]
    ]
    results = []
    for name in names:
        results.append(_worker(name, Path(args.out)))
        print(markdown(results[-1:]).splitlines()[-1], flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(report(results))


if __name__ == "__main__":
    os.environ.setdefault("OV_LOOPS_PROGRESS", "0")
    main()
