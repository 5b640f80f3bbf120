"""Fuzz campaign: hostile `ov-loops convert` invocations.

Models: scenario models (tests/scenarios.py) as ONNX, the IR ov-loops makes of one (.xml and
.bin), and files that are no model (empty, text, XML, zip, random bytes, a directory, a path that
does not exist). Options: `--input` from a grammar of ovc's forms with hostile parts (huge,
negative, Unicode-digit and range dims, unknown and mixed types, unknown names, broken
brackets), `--output` (tensor names, an IR path, empty, repeated), `-o` (a file, a directory,
one ending in /, no .xml, a file in the way, an unwritable place, absent), `--compress_to_fp16`,
`--optimize`, `--target`, `--unroll`, `--layout`, `--stateful`, `--format`, -q/-v, and unknown
or repeated options. Invocations run `ov_loops.cli.main` in a driver process (hostile_check's)
working in a scratch directory.

Counts: inputs tried; tracebacks ('Traceback' in stderr, or an error of more than one line);
wrong_exit_codes (not 0, 1 or 2); crashes (the driver died); hangs; partial_outputs (a failed
run left a file or directory behind, or a successful one did not write what it reports);
refusals (exit 1 or 2 in one line); examples (the first few findings, each with its seed).
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from tests.fuzz import MAX_EXAMPLES, signature
from tests.fuzz.hostile_check import Driver

TIMEOUT_SECONDS = 120.0
SCENARIO_NAMES = [
    "loop:loop_no_scan_outputs",
    "loop:loop_trip_count_and_condition",
    "loop:loop_no_trip_count_while",
    "loop:loop_nested_three_deep_with_captures",
    "scan:scan_forward_running_sum",
    "scan:scan_inside_scan",
]


def run(budget_seconds: float, seed: int, max_inputs: int | None = None) -> dict:
    """Run hostile `convert` invocations for about `budget_seconds`; the counts of findings."""
    rng = random.Random(seed)
    counts = dict.fromkeys(
        ("inputs", "refusals", "tracebacks", "wrong_exit_codes", "crashes", "hangs"), 0
    ) | {"partial_outputs": 0}
    examples: list[dict] = []
    seen: set[tuple[str, str]] = set()
    deadline = time.monotonic() + budget_seconds
    with tempfile.TemporaryDirectory(prefix="hostile-convert-") as scratch:
        root = Path(scratch)
        models = _models(root / "models")
        work = root / "work"
        work.mkdir()
        driver = Driver(work)
        try:
            while time.monotonic() < deadline and counts["inputs"] != max_inputs:
                case_seed = rng.randrange(2**32)
                argv = _case(np.random.default_rng(case_seed), models, work)
                before = _listing(work)
                outcome = driver.invoke(argv, TIMEOUT_SECONDS)
                counts["inputs"] += 1
                kinds = _judge(outcome, before, _listing(work), work)
                if not kinds and outcome.get("code") in (1, 2):
                    counts["refusals"] += 1
                for kind in kinds:
                    counts[kind] += 1
                    detail = _last(outcome.get("stderr", ""))
                    key = (kind, signature(detail))
                    if key not in seen and len(examples) < MAX_EXAMPLES:
                        seen.add(key)
                        what = {"input": " ".join(argv), "detail": detail}
                        examples.append({"class": kind, "seed": case_seed, **what, **outcome})
                _clean(work)
        finally:
            driver.close()
    return {**counts, "examples": examples}


def _judge(outcome: dict, before: set[str], after: set[str], work: Path) -> list[str]:
    if outcome.get("hang"):
        return ["hangs"]
    if outcome.get("died"):
        return ["crashes"]
    code, err = outcome["code"], outcome["stderr"]
    errors = [line for line in err.splitlines() if line.strip() and not _is_log(line)]
    found = []
    if "Traceback" in err or (code != 0 and len(errors) != 1):
        found.append("tracebacks")
    if code not in (0, 1, 2):
        found.append("wrong_exit_codes")
    made = after - before
    if code != 0 and made:
        found.append("partial_outputs")
    if code == 0 and not _wrote_what_it_says(outcome["stdout"], work):
        found.append("partial_outputs")
    return found


def _is_log(line: str) -> bool:
    return line.startswith(("ov-loops: INFO:", "ov-loops: DEBUG:", "ov-loops: WARNING:"))


def _wrote_what_it_says(out: str, work: Path) -> bool:
    """A successful convert names the IR it wrote (text: `wrote PATH (...)`; JSON: output);
    --help and --version write nothing and name nothing."""
    if out.startswith("{"):
        written = json.loads(out)["output"]
    else:
        lines = [line for line in out.splitlines() if line.startswith("wrote ")]
        if not lines:
            return True
        written = lines[-1].removeprefix("wrote ").rsplit(" (", 1)[0]
    path = work / written
    return path.is_file() and path.with_suffix(".bin").is_file()


def _last(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _listing(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


def _clean(folder: Path) -> None:
    for path in folder.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


# -- the models ----------------------------------------------------------------------------------
def _models(folder: Path) -> dict[str, Path]:
    """Scenario models as ONNX, one converted to IR, and files that are no model."""
    import ov_loops
    from tests.loop_scenarios import SCENARIOS as LOOPS
    from tests.scan_scenarios import SCENARIOS as SCANS

    folder.mkdir()
    builders = {
        **{f"loop:{n}": b for n, b in LOOPS.items()},
        **{f"scan:{n}": b for n, b in SCANS.items()},
    }
    models = {}
    for name in SCENARIO_NAMES:
        path = folder / f"{name.split(':')[1]}.onnx"
        onnx.save(builders[name]()[0], path)
        models[name] = path
    first = models[SCENARIO_NAMES[0]]
    ov_loops.save(ov_loops.convert(first), folder / "ir.xml")
    models |= {"ir.xml": folder / "ir.xml", "ir.bin": folder / "ir.bin"}
    others = {
        "empty.onnx": b"",
        "text.onnx": b"not a model\n",
        "graph.xml": b'<?xml version="1.0"?><graph/>',
        "noise.onnx": bytes(range(256)) * 3,
        "cut.onnx": first.read_bytes()[: first.stat().st_size // 2],
    }
    for name, data in others.items():
        (folder / name).write_bytes(data)
        models[name] = folder / name
    (folder / "a_directory.onnx").mkdir()
    models |= {"directory": folder / "a_directory.onnx", "missing": folder / "missing.onnx"}
    return models


# -- one hostile invocation ----------------------------------------------------------------------
# Each part of an invocation is hostile with this probability, so that most reach conversion.
HOSTILE = 0.15
GOOD_DIMS = ["1", "2", "3", "5", "?", "-1", "1..8", "..4", "2.."]
BAD_DIMS = [
    "0",
    "..",
    "8..2",
    "-2",
    "a",
    "",
    "99999999999999999999",
    "9223372036854775807",
    "9223372036854775806",
    "\u00b2",
    "\uff13",
    "\u0661",
    "1.5",
    "1e3",
    " 3 ",
]
TYPES = ["f32", "f16", "i64", "i32", "boolean", "u8", "bf16", "f64", "float32"]
BAD_TYPES = ["", "f33", "F32", "string", "\u2460"]
BAD_NAMES = ["Q", "", "M M", "\u540d", "M:0", "ir"]
BROKEN = ["[", "]", "{", "}", "[[1]]", "{f32}{f16}", ",", ",,", "->5", "[1]->5", "=", "M[]=3"]
OPTIONS = {  # option: (values that are valid, hostile ones)
    "--compress_to_fp16": (["True", "False", "false"], ["yes", ""]),
    "--optimize": (["none", "default", "max"], ["maximum", ""]),
    "--target": (["CPU", "GPU", "NPU"], ["npu", "TPU"]),
    "--unroll": (["0", "4", "64"], ["-1", "99999999999999999999", "x", "1.5"]),
    "--layout": (["ir", "ovms"], ["onnx"]),
    "--format": (["text", "json"], ["yaml"]),
}


def _pick(rng, good: list, bad: list) -> str:
    return str(rng.choice(bad if rng.random() < HOSTILE else good))


def _input_text(rng, inputs: dict[str, int]) -> str:
    """Entries for the model's `inputs` (name: rank), each part hostile now and then."""
    entries = []
    names = sorted(inputs) or ["x"]
    for _ in range(int(rng.integers(1, len(names) + 1))):
        name = _pick(rng, names, BAD_NAMES)
        rank = inputs.get(name, int(rng.integers(0, 3)))
        if rng.random() < HOSTILE:
            rank = int(rng.integers(0, 4))
        dims = ",".join(_pick(rng, GOOD_DIMS, BAD_DIMS) for _ in range(rank))
        entry = name + (f"[{dims}]" if rng.random() < 0.8 else "")
        if rng.random() < 0.3:
            entry += f"{{{_pick(rng, TYPES, BAD_TYPES)}}}"
        if rng.random() < HOSTILE / 2:
            entry += str(rng.choice(BROKEN))
        entries.append(entry)
    return ",".join(entries)


def _output_model(rng, work: Path) -> list[str]:
    good = ["file", "file", "dir", "slash", "none", "nested"]
    how = _pick(rng, good, ["bad_suffix", "in_the_way", "unwritable", "empty"])
    if how == "none":
        return []
    if how == "in_the_way":
        (work / "blocker").write_text("x")
        return ["-o", "blocker/o.xml"]
    if how == "dir":
        (work / "out").mkdir(exist_ok=True)
    given = {
        "file": "o.xml",
        "dir": "out",
        "slash": "out/",
        "nested": "a/b/c/o.xml",
        "bad_suffix": "o.bin",
        "unwritable": "/proc/ov-loops-hostile/o.xml",
        "empty": "",
    }
    return ["-o", given[how]]


def _inputs_of(model: Path) -> dict[str, int]:
    """The ONNX model's inputs and their ranks (none for a file that is no ONNX model)."""
    try:
        graph = onnx.load(model).graph
    except Exception:  # the hostile files: no inputs to name
        return {}
    return {v.name: len(v.type.tensor_type.shape.dim) for v in graph.input}


def _case(rng, models: dict[str, Path], work: Path) -> list[str]:
    names = sorted(models)
    scenarios = [name for name in names if name in SCENARIO_NAMES]
    model = models[_pick(rng, scenarios, names)]
    argv = ["convert", str(model), *_output_model(rng, work)]
    if rng.random() < 0.6:
        argv += ["--input", _input_text(rng, _inputs_of(model))]
    if rng.random() < 0.2:
        argv += ["--output", str(rng.choice(["n", "acc", "M", "o.xml", "", ",", "x,x", "nope"]))]
    for option, (good, bad) in OPTIONS.items():
        if rng.random() < 0.3:
            argv.append(f"{option}={_pick(rng, good, bad)}")
    for flag in ("--stateful", "-q", "-v", "-vv", "--bogus", "--input"):
        if rng.random() < (0.15 if flag in ("--stateful", "-q", "-v") else 0.03):
            argv.append(flag)
    return argv
