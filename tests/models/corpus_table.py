"""The per-exporter table of docs/reliability.md ("Real exports"): every model of the corpus
through every feature of `tests/models/corpus.py` (the suite's own checks), one worker process
per model (a plugin crash costs one model), and `openvino.convert_model` on the same ONNX.

    PYTHONPATH=<ov-loops tree> python -m tests.models.corpus_table [--json out.json] [NAME ...]

Prints the table, then one line per failing (model, feature) with its error's first line: the
entries of `corpus_known_failures.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

LEVELS = ("none", "default", "max")
ROOT = Path(__file__).resolve().parents[2]


def _first_line(error: BaseException) -> str:
    text = " | ".join(line.strip() for line in str(error).splitlines()[:4] if line.strip())
    return f"{type(error).__name__}: {text[:300]}"


def _attempt(run) -> str | None:
    """None when `run()` passes, else its error's first line."""
    try:
        run()
    except BaseException as error:  # noqa: BLE001 -- recorded, skips too
        return _first_line(error)
    return None


def survey(name: str) -> dict:
    """Each applicable feature's error (None: passes), whether each level converts, and
    whether openvino.convert_model converts and matches."""
    import openvino as ov

    from tests.models.corpus import FEATURES, applies, assert_runs, models, translated

    model = next(m for m in models() if m.name == name)
    result = {"name": name, "exporter": model.exporter, "features": {}, "converts": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for feature, check in FEATURES.items():
            if applies(model, feature):
                result["features"][feature] = _attempt(lambda c=check: c(model, Path(scratch)))
    for level in LEVELS:
        result["converts"][level] = _attempt(lambda k=level: translated(name, k)) is None
    converted = []
    result["convert_model_converts"] = (
        _attempt(lambda: converted.append(ov.convert_model(str(model.onnx)))) is None
    )
    result["convert_model"] = result["convert_model_converts"] and _attempt(
        lambda: assert_runs(model, converted[0], model.sets(), "convert_model")
    )
    return result


def _worker(name: str) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.models.corpus_table", "--worker", name],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=1800,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"name": name, "crashed": f"exit {done.returncode}: {done.stderr[-300:]}"}
    return json.loads(lines[-1])


def _cell(rows: list[dict], feature: str) -> str:
    """passed / applicable pairs, and "(+N refused)": pairs refused where a refusal is right
    (`REFUSED`); "-" where the feature applies to no model."""
    from tests.models.corpus_known_failures import REFUSED

    tried = [(r["name"], r["features"][feature]) for r in rows if feature in r["features"]]
    if not tried:
        return "-"
    passed = sum(1 for name, e in tried if e is None and (name, feature) not in REFUSED)
    refused = sum(1 for name, e in tried if e is not None and (name, feature) in REFUSED)
    return f"{passed}/{len(tried)}" + (f" (+{refused} refused)" if refused else "")


def table(results: list[dict]) -> str:
    """The markdown table of docs/reliability.md, one row per exporter and a total row."""
    groups = defaultdict(list)
    for r in results:
        if "crashed" not in r:
            groups[r["exporter"]].append(r)
    groups = dict(sorted(groups.items()))
    groups["all"] = [r for rows in groups.values() for r in rows]
    from tests.models.corpus import FEATURES

    columns = ["exporter", "models", *FEATURES, "`convert_model` converts / matches"]
    lines = ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for exporter, rows in groups.items():
        cm_converts = sum(r["convert_model_converts"] for r in rows)
        cm = f"{cm_converts} / {sum(r['convert_model'] is None for r in rows)}"
        cells = [exporter, str(len(rows)), *(_cell(rows, f) for f in FEATURES), cm]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def failures(results: list[dict]) -> str:
    """One line per failing (model, feature) and per crashed worker."""
    out = []
    for r in results:
        if "crashed" in r:
            out.append(f"{r['name']}: worker crashed: {r['crashed']}")
            continue
        for feature, error in r["features"].items():
            if error and not error.startswith("Skipped"):
                out.append(f"{r['name']} {feature}: {error}")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--json")
    parser.add_argument("--from-json")
    parser.add_argument("--worker")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(survey(args.worker)))
        return
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
    else:
        from tests.models.corpus import models

        results = []
        for name in args.names or [m.name for m in models()]:
            results.append(_worker(name))
            print(name, "crashed" if "crashed" in results[-1] else "done", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))
    print(failures(results))


if __name__ == "__main__":
    os.environ.setdefault("OV_LOOPS_PROGRESS", "0")
    main()
