"""Fuzz campaign: hostile `ov-loops check` invocations.

Models come from the scenario builders (tests/loop_scenarios.py, tests/scan_scenarios.py), as
ONNX and as the IR ov-loops makes of them. Each invocation gets random `--inputs` (the
scenario's own feeds, or mutated: dropped, renamed, retyped to strings, structured, complex,
raw bf16 or objects, reshaped, scaled to huge or NaN values; or an empty, garbage, .npy or
truncated file), random `--shape`, `--seed`, `--max-iterations` and `--chunks` values. The
invocations run `ov_loops.cli.main` in a driver process (one start-up for many invocations); a
driver that dies is a crash, one that does not answer in time a hang, and it is replaced.

Counts: inputs tried; tracebacks ('Traceback' in stderr); crashes (negative return code);
hangs (timeout); partial outputs (an error after report lines, or a report without its verdict);
disagreements (a MISMATCH or "onnxruntime DISAGREES" where the inputs are valid); examples (the
first few findings, each with its case seed and recipe).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import onnx

from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS
from tests.fuzz import start_worker

TIMEOUT_SECONDS = 120.0
MAX_EXAMPLES = 12


# -- the campaign (parent side) ------------------------------------------------------------------
def run(budget_seconds: float, seed: int) -> dict:
    """Run hostile `check` invocations for about `budget_seconds`; the counts of findings."""
    rng = random.Random(seed)
    counts = dict.fromkeys(
        ("inputs", "tracebacks", "crashes", "hangs", "partial_outputs", "disagreements"), 0
    )
    examples: list[dict] = []
    deadline = time.monotonic() + budget_seconds
    with tempfile.TemporaryDirectory(prefix="hostile-check-") as scratch:
        models = _Models(Path(scratch))
        driver = Driver()
        try:
            while time.monotonic() < deadline:
                case_seed = rng.randrange(2**32)
                argv, recipe, valid = _case(case_seed, models, Path(scratch))
                outcome = driver.invoke(argv, TIMEOUT_SECONDS)
                counts["inputs"] += 1
                for kind in _judge(outcome, valid):
                    counts[kind] += 1
                    if len(examples) < MAX_EXAMPLES:
                        examples.append(
                            {"kind": kind, "seed": case_seed, "recipe": recipe, **outcome}
                        )
        finally:
            driver.close()
    return {**counts, "examples": examples}


def _judge(outcome: dict, valid: bool) -> list[str]:
    code, out, err = outcome["code"], outcome["stdout"].strip(), outcome["stderr"]
    if outcome.get("hang"):
        return ["hangs"]
    if outcome.get("died"):  # a negative code: killed by a signal
        return ["crashes"]
    found = []
    if "Traceback" in err:
        found.append("tracebacks")
    verdict = _has_verdict(out)
    refusal = code == 1 and not out and len(err.strip().splitlines()) == 1  # e.g. --chunks
    if (code in (0, 1) and not verdict and not refusal) or (code not in (0, 1) and out):
        found.append("partial_outputs")
    if code not in (0, 1) and len(err.strip().splitlines()) != 1:
        found.append("partial_outputs")
    if valid and (code == 1 or "DISAGREES" in out):
        found.append("disagreements")
    return found


def _has_verdict(out: str) -> bool:
    """The text report ends in its verdict line (MATCH, MISMATCH, MATCH (N warning(s) above));
    the JSON one is one object with a verdict."""
    if out.startswith("{"):
        try:
            return json.loads(out).get("verdict") in ("MATCH", "MISMATCH")
        except ValueError:
            return False
    return out.splitlines()[-1].startswith(("MATCH", "MISMATCH")) if out else False


class _Models:
    """Scenario models saved as ONNX and, where ov-loops converts them, as IR; with their
    first feeds."""

    def __init__(self, folder: Path) -> None:
        from tests.scenarios import SCENARIOS

        self.folder = folder
        self.builders = SCENARIOS
        self.names = sorted(self.builders)
        self._saved: dict[str, tuple[Path, Path | None, dict]] = {}

    def get(self, name: str) -> tuple[Path, Path | None, dict]:
        if name not in self._saved:
            import ov_loops

            made, runs = self.builders[name]()
            entry = runs[0]
            feeds = entry[0] if isinstance(entry, tuple) else entry
            source = self.folder / f"{name}.onnx"
            onnx.save(made, source)
            xml: Path | None = self.folder / f"{name}.xml"
            try:
                ov_loops.save(ov_loops.convert(made), xml, compress_to_fp16=False)
            except ov_loops.OvLoopsError:
                xml = None
            self._saved[name] = (source, xml, feeds)
        return self._saved[name]


# -- one hostile invocation ----------------------------------------------------------------------
MUTATIONS = ["values"] * 3 + ["dtype"] * 3 + ["shape"] * 2 + ["drop"] * 2 + ["rename", "empty"]
HOSTILE_DTYPES = [
    np.int8,
    np.int32,
    np.int32,
    np.int64,
    np.uint64,
    np.float16,
    np.float64,
    np.float64,
    np.bool_,
    np.complex64,
    "U3",
    "S2",
    [("re", "f4"), ("im", "f4")],
    "V2",
    object,
]
HOSTILE_DIMS = [0, 1, 2, 2, 3, 3, 4, 7, -3, 2**31, 10**20]
HOSTILE_SEEDS = [0, 1, 7, -1, 2**70]
HOSTILE_ITERATIONS = [None, None, None, 1, 3, 100, 0, -1, DEFAULT_MAX_ITERATIONS]


def _case(case_seed: int, models: _Models, folder: Path) -> tuple[list[str], str, bool]:
    """argv of one invocation, a recipe describing it, and whether its inputs are valid."""
    rng = np.random.default_rng(case_seed)
    name = models.names[rng.integers(len(models.names))]
    source, xml, feeds = models.get(name)
    model = xml if xml is not None and rng.random() < 0.4 else source
    argv, recipe = ["check", str(model)], [f"{name}{model.suffix}"]
    kind = rng.choice(["valid", "valid", "none", "mutated", "mutated", "mutated", "file"])
    path = folder / f"case-{case_seed}.npz"
    if kind == "valid":
        np.savez(path, **feeds)
    elif kind == "mutated":
        recipe.append(_write_mutated(rng, feeds, path))
    elif kind == "file":
        recipe.append(_write_broken_file(rng, feeds, path))
    if kind != "none":
        argv += ["--inputs", str(path)]
    options = _hostile_options(rng, list(feeds)) if kind != "valid" else []
    recipe.append(f"inputs {kind}")
    return argv + options, "; ".join(recipe + options), kind == "valid"


def _write_mutated(rng, feeds: dict, path: Path) -> str:
    arrays, done = dict(feeds), []
    for key in list(arrays):
        if rng.random() < 0.6:
            continue
        how = rng.choice(MUTATIONS)
        value = np.asarray(arrays.pop(key))
        if how == "rename":
            arrays[str(rng.choice([f"{key}_bogus", "", "../up", "名前", key.upper()]))] = value
        elif how == "dtype":
            dtype = HOSTILE_DTYPES[rng.integers(len(HOSTILE_DTYPES))]
            arrays[key] = _retyped(value, dtype)
        elif how == "shape":
            dims = rng.integers(0, 4, rng.integers(0, 4))
            arrays[key] = np.resize(value, dims).astype(value.dtype) if value.size else value
        elif how == "values":
            scale = rng.choice([1e30, -1e30, np.nan, np.inf, -7, 2**40])
            with np.errstate(all="ignore"):
                arrays[key] = (value.astype(np.float64) * scale).astype(value.dtype)
        elif how == "empty":
            arrays[key] = np.zeros((0, *value.shape[1:]), value.dtype)
        done.append(f"{key}:{how}")
    np.savez(path, **arrays)
    return "mutated " + ",".join(done)


def _retyped(value: np.ndarray, dtype) -> np.ndarray:
    if dtype == "V2":
        return np.zeros(value.shape, "V2")
    if isinstance(dtype, list) or dtype is object:
        return np.zeros(value.shape, dtype)
    with np.errstate(all="ignore"):
        return value.astype(dtype)


def _write_broken_file(rng, feeds: dict, path: Path) -> str:
    how = rng.choice(["empty", "garbage", "npy", "truncated"])
    if how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(rng.bytes(int(rng.integers(1, 200))))
    elif how == "npy":
        with open(path, "wb") as handle:
            np.save(handle, np.zeros(3))
    else:
        np.savez(path, **feeds)
        data = path.read_bytes()
        path.write_bytes(data[: int(rng.integers(1, max(2, len(data))))])
    return f"file {how}"


def _hostile_options(rng, names: list[str]) -> list[str]:
    options = []
    for _ in range(int(rng.integers(0, 3))):
        name = rng.choice([*names, *names, "bogus"]) if names else "bogus"
        dims = [str(HOSTILE_DIMS[rng.integers(len(HOSTILE_DIMS))]) for _ in range(rng.integers(4))]
        token = f"{name}={','.join(dims)}"
        if rng.random() < 0.15:  # malformed
            token = rng.choice([f"{name}=a", "=3", name, f"{name}=1.5"])
        options += ["--shape", str(token)]
    if rng.random() < 0.3:
        options += ["--seed", str(HOSTILE_SEEDS[rng.integers(len(HOSTILE_SEEDS))])]
    iterations = HOSTILE_ITERATIONS[rng.integers(len(HOSTILE_ITERATIONS))]
    if iterations is not None:
        options += ["--max-iterations", str(iterations)]
    return options + _hostile_issue14_options(rng, names)


HOSTILE_BOUNDS = ["0", "1", "-1", "3", "1e30", "-1e30", "nan", "inf", "2.5", "x", ""]


def _hostile_issue14_options(rng, names: list[str]) -> list[str]:
    """--val-range, OpenVINO's NAME[D0,D1] shapes, --rtol/--atol (global or per output), JSON,
    --chunks."""
    options = []
    name = str(rng.choice([*names, "bogus"])) if names else "bogus"
    if rng.random() < 0.3:
        low, high = (HOSTILE_BOUNDS[rng.integers(len(HOSTILE_BOUNDS))] for _ in range(2))
        prefix = rng.choice([f"{name}=", "", "=", f"{name}"])
        options.append(f"--val-range={prefix}{low},{high}")
    if rng.random() < 0.2:
        dims = ",".join(str(HOSTILE_DIMS[rng.integers(len(HOSTILE_DIMS))]) for _ in range(2))
        options += ["--shape", str(rng.choice([f"{name}[{dims}]", f"{name}[{dims}", f"[{dims}]"]))]
    if rng.random() < 0.3:
        value = str(rng.choice(["1e-3", "0", "-1", "inf", "nan", "x", "a=1", "=1", "bogus=1"]))
        options.append(f"--{rng.choice(['rtol', 'atol'])}={value}")
    if rng.random() < 0.2:
        options += ["--format", "json"]
    if rng.random() < 0.25:
        options.append(f"--chunks={_hostile_chunks(rng, name)}")
    return options


HOSTILE_CHUNK_AXES = ["", ":0", ":1", ":-1", ":9", ":x", ":"]
HOSTILE_CHUNK_VALUES = ["2", "1", "0", "-1", "99", "1,1", "3,0,2", "0,0", "2.5", "", "x", "1,-1"]


def _hostile_chunks(rng, name: str) -> str:
    """A --chunks value: the input (or a bogus one), an axis in or out of range, chunk counts
    or lengths that fit, do not fit or do not parse."""
    axis = HOSTILE_CHUNK_AXES[rng.integers(len(HOSTILE_CHUNK_AXES))]
    value = HOSTILE_CHUNK_VALUES[rng.integers(len(HOSTILE_CHUNK_VALUES))]
    return f"{name}{axis}={value}"


# -- the driver: runs invocations in a child process ----------------------------------------------
class Driver:
    """A child running `ov_loops.cli.main` for each request (in the directory `cwd`, by default
    the repository's); replaced after a crash or hang."""

    def __init__(self, cwd: Path | None = None) -> None:
        self._process: subprocess.Popen | None = None
        self._cwd = cwd

    def invoke(self, argv: list[str], timeout: float) -> dict:
        if self._process is None:
            where = [] if self._cwd is None else [str(self._cwd)]
            self._process = start_worker("tests.fuzz.hostile_check", *where)
        process = self._process
        process.stdin.write(json.dumps(argv) + "\n")
        process.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout)
        if not ready:
            self.close()
            return {"code": None, "stdout": "", "stderr": "", "hang": True, "argv": argv}
        line = process.stdout.readline()
        if not line:
            self._process = None
            code = process.wait()
            return {"code": code, "stdout": "", "stderr": "", "died": True, "argv": argv}
        return {**json.loads(line), "argv": argv}

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()


def _serve() -> None:
    """The driver's loop: one JSON argv per line in, one JSON outcome per line out; in the
    directory given as the first argument, if any."""
    from ov_loops.cli import main

    if len(sys.argv) > 1:
        os.chdir(sys.argv[1])
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # native prints cannot corrupt replies
    for line in sys.stdin:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(json.loads(line))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
            except BaseException:  # what would reach the user as a traceback
                traceback.print_exc()
                code = 1
        replies.write(
            json.dumps({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}) + "\n"
        )
        replies.flush()


if __name__ == "__main__":
    _serve()
