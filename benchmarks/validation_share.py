"""What share of the CPU time of `translate` + `save` the validation before writing takes: per
model, a fresh process translates it, writes the IR with `openvino.save_model` and validates
it (`ov_loops.validate`, as `save` does), each timed in CPU seconds; with several source trees
(`--trees`, each put first on PYTHONPATH) the variants run interleaved, round by round, the
order alternating. `--cli`: the process runs `ov-loops convert MODEL` instead (the model freed
before validating: ov_loops.staging), the validation timed inside it, and its peak RSS.

    python benchmarks/validation_share.py MODEL.onnx [MODEL.onnx ...] [--trees A B] [--rounds 3]
        [--cli]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys, tempfile, time
from pathlib import Path
import openvino as ov
from ov_loops.api import translate
from ov_loops.ir.validate import validate
started = time.process_time()
conversion = translate(sys.argv[1])
translated = time.process_time()
with tempfile.TemporaryDirectory() as scratch:
    xml = Path(scratch) / "model.xml"
    ov.save_model(conversion.model, str(xml), compress_to_fp16=True)
    saved = time.process_time()
    errors = len(validate(xml).errors)
    validated = time.process_time()
print(json.dumps({"translate": translated - started, "save": saved - translated,
                  "validate": validated - saved, "errors": errors}))
"""

CLI_CHILD = """
import json, resource, sys, tempfile, time
import ov_loops.ir.validate
from ov_loops.cli import main
validate, spent = ov_loops.ir.validate.validate, []
def timed(path):
    started = time.process_time()
    report = validate(path)
    spent.append(time.process_time() - started)
    return report
ov_loops.ir.validate.validate = timed
with tempfile.TemporaryDirectory() as scratch:
    code = main(["convert", sys.argv[1], "-o", scratch + "/model.xml", "-q"])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"translate": usage.ru_utime + usage.ru_stime - sum(spent), "save": 0.0,
                  "validate": sum(spent), "errors": code,
                  "rss": usage.ru_maxrss / 1024}))
"""


def measure(model: str, tree: str | None, child: str = CHILD) -> dict[str, float]:
    environment = dict(os.environ)
    if tree:
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [tree, os.environ.get("PYTHONPATH")])
        )
    done = subprocess.run(
        [sys.executable, "-c", child, model], env=environment, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{model}: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--trees", nargs="*", default=[None])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cli", action="store_true", help="time `ov-loops convert` whole")
    args = parser.parse_args()
    child = CLI_CHILD if args.cli else CHILD
    runs: dict[tuple[str, str | None], list[dict]] = {}
    for round_number in range(args.rounds):
        order = args.trees if round_number % 2 == 0 else list(reversed(args.trees))
        for model in args.models:
            for tree in order:
                runs.setdefault((model, tree), []).append(measure(model, tree, child))
        print(f"round {round_number + 1}: load {os.getloadavg()[0]:.1f}", flush=True)
    for (model, tree), found in runs.items():
        totals = [run["translate"] + run["save"] + run["validate"] for run in found]
        shares = sorted(100 * run["validate"] / total for run, total in zip(found, totals))
        validated = statistics.median(run["validate"] for run in found)
        print(
            f"{Path(model).stem:28} {tree or '':24} validate {validated:6.3f} s of "
            f"{statistics.median(totals):6.2f} s: {statistics.median(shares):4.1f}% "
            f"({shares[0]:.1f}-{shares[-1]:.1f}), errors {found[0]['errors']}"
            + (f", peak RSS {max(run['rss'] for run in found):.0f} MiB" if args.cli else "")
        )


if __name__ == "__main__":
    main()
