"""Fuzzing ov-loops through its command line: the shared result type and the subprocess runner.

Every campaign (a module with `run(budget_seconds, seed) -> dict`) feeds inputs to
`python -m ov_loops ...` in a subprocess and classifies what came back against the CLI's
promise: one line on stderr, the documented exit code, no traceback, no native crash, no hang,
nothing written half-way. A campaign's result is a counts dict (see `new_counts`); its
"examples" are the distinct failures, each with the seed that rebuilds the input.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]

# Classes that break the promise (each fails a fuzz run), then what is only counted.
FAILURES = (
    "tracebacks",
    "crashes",
    "hangs",
    "wrong_exit_codes",
    "partial_outputs",
    "disagreements",
    "level_disagreements",
    "bad_ir",
    "bad_output",
)
INFORMATION = ("inputs", "refusals")
EXIT_CODES = {"convert": {0, 1, 2}, "validate": {0, 1, 2}, "check": {0, 1, 2}}
MEMORY_LIMIT = 6 * 2**30  # address space per subprocess: a runaway reference fails, not the host
MAX_EXAMPLES = 40


def new_counts() -> dict:
    """An empty result: every class at zero and no examples. "inputs" counts inputs tried,
    "refusals" the invocations that failed cleanly (exit 1 or 2 with one line), each failure
    class the invocations (or IR probes) that fell in it."""
    return {key: 0 for key in (*INFORMATION, *FAILURES)} | {"examples": []}


def merge(total: dict, part: dict) -> dict:
    """Add `part`'s counts into `total` (keys either lacks count as 0) and its examples, one
    per distinct failure (their counts added)."""
    for key, value in part.items():
        if isinstance(value, int):
            total[key] = total.get(key, 0) + value
    total["examples"] = [_as_record(e) for e in total.get("examples", [])]
    kept = {_example_key(e): e for e in total["examples"]}
    for example in map(_as_record, part.get("examples", [])):
        same = kept.get(_example_key(example))
        if same is None:
            kept[_example_key(example)] = example
            total["examples"].append(example)
        else:
            same["count"] = same.get("count", 1) + example.get("count", 1)
    return total


def _as_record(example) -> dict:
    """An example as a dict (the differential campaign keeps its examples as lines of text)."""
    return example if isinstance(example, dict) else {"detail": str(example)}


def _example_key(example: dict) -> tuple[str, str, str]:
    """Failures are alike when their messages are; crashes and hangs, which say little, when
    the kinds of mutation that led to them are alike too."""
    kind = str(example.get("class"))
    steps = ""
    if kind in ("crashes", "hangs", "bad_ir"):
        made = str(example.get("input", "")).partition(": ")[2].split("; ")
        steps = ",".join(sorted({step.split(":")[0] for step in made}))
    return kind, signature(str(example.get("detail", ""))), steps


def failure_count(counts: dict) -> int:
    """How many inputs broke the promise, over every failure class."""
    return sum(counts.get(key, 0) for key in FAILURES)


@dataclass
class Outcome:
    """One CLI invocation and the failure classes it falls in (empty: it kept the promise)."""

    command: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    classes: list[str] = field(default_factory=list)
    detail: str = ""

    @property
    def refused(self) -> bool:
        return not self.classes and self.returncode not in (0, None)


def run_cli(
    arguments: Sequence[str],
    timeout: float = 60.0,
    cwd: Path | None = None,
    outputs: Sequence[Path] = (),
    watched: Path | None = None,
) -> Outcome:
    """Run `python -m ov_loops *arguments` and classify it.

    `outputs` are the files the command writes on success (convert's .xml and .bin): any of
    them left behind by a failing run is a partial output, and so is any other new file in the
    directory `watched` (temporary files), whatever the exit code.
    """
    before = _listing(watched)
    command = [sys.executable, "-m", "ov_loops", *arguments]
    outcome = run_python(command, timeout, cwd)
    outcome.classes.extend(_cli_classes(outcome, arguments[0]))
    failed = outcome.returncode != 0
    left = [path.name for path in outputs if failed and path.exists()]
    expected = {path.name for path in outputs}
    left += sorted(_listing(watched) - before - expected)
    if left:
        outcome.classes.append("partial_outputs")
        outcome.detail = outcome.detail or f"left behind: {', '.join(left)}"
    return outcome


def start_worker(module: str, *args: str) -> subprocess.Popen:
    """`python -m MODULE ARGS` from this checkout (first on PYTHONPATH), answering lines of text
    on stdin/stdout; what native libraries print to stderr is dropped."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=REPOSITORY,
        env=env,
    )


def run_python(command: Sequence[str], timeout: float, cwd: Path | None = None) -> Outcome:
    """Run `command` in its own session with a memory limit; on timeout kill its process group
    (returncode None). Classes only for what any command must not do: hang or die by a signal."""
    env = dict(os.environ, PYTHONPATH=str(REPOSITORY), PYTHONDONTWRITEBYTECODE="1")
    started = time.monotonic()
    process = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_limit_memory,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        outcome = Outcome(list(command), None, _text(stdout), _text(stderr), timeout)
        outcome.classes.append("hangs")
        outcome.detail = f"no exit after {timeout:.0f} s"
        return outcome
    outcome = Outcome(
        list(command), process.returncode, _text(stdout), _text(stderr), time.monotonic() - started
    )
    if process.returncode < 0:
        outcome.classes.append("crashes")
        outcome.detail = f"killed by {_signal_name(-process.returncode)}"
    return outcome


def _cli_classes(outcome: Outcome, command: str) -> list[str]:
    """Tracebacks, multi-line errors and exit codes outside the command's documented set."""
    if outcome.returncode is None or outcome.returncode < 0:
        return []
    classes = []
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    if "Traceback" in outcome.stderr or (outcome.returncode != 0 and len(lines) > 1):
        classes.append("tracebacks")
        outcome.detail = last_line(outcome.stderr)
    if outcome.returncode not in EXIT_CODES[command]:
        classes.append("wrong_exit_codes")
        outcome.detail = outcome.detail or f"exit {outcome.returncode}: {last_line(outcome.stderr)}"
    return classes


def last_line(text: str) -> str:
    """The last non-empty line of `text`, shortened: what a user would read first."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def signature(text: str) -> str:
    """`text` with numbers, quoted names and paths blanked: failures that differ only in those
    are one class."""
    text = re.sub(r"(/[\w.+-]+)+", "PATH", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", text)
    return re.sub(r"-?\d+", "N", text)[:160]


class Recorder:
    """Counts one campaign's outcomes and keeps one example per distinct failure."""

    def __init__(self, campaign: str) -> None:
        self.campaign = campaign
        self.counts = new_counts()
        self._seen: dict[tuple[str, str], dict] = {}

    def failure(self, kind: str, seed: int, what: str, detail: str, command: str = "") -> None:
        """Count one failure of class `kind` and keep it as an example if its class is new."""
        self.counts[kind] = self.counts.get(kind, 0) + 1
        key = _example_key({"class": kind, "input": what, "detail": detail})
        if key in self._seen:
            self._seen[key]["count"] += 1
            return
        example = {
            "campaign": self.campaign,
            "class": kind,
            "seed": seed,
            "input": what,
            "command": command,
            "detail": detail,
            "count": 1,
        }
        self._seen[key] = example
        if len(self.counts["examples"]) < MAX_EXAMPLES:
            self.counts["examples"].append(example)

    def outcome(self, outcome: Outcome, seed: int, what: str) -> None:
        """Count `outcome`'s failure classes, or a refusal when it failed cleanly."""
        for kind in outcome.classes:
            self.failure(kind, seed, what, outcome.detail, " ".join(outcome.command[1:]))
        if outcome.refused:
            self.counts["refusals"] += 1

    def info(self, kind: str, seed: int, what: str, detail: str) -> None:
        """An information-only finding (counted under `kind`, not a failure)."""
        self.failure(kind, seed, what, detail)


def fuzz(
    campaign: str,
    try_input: Callable[[int, Recorder], None],
    budget_seconds: float,
    seed: int,
    max_inputs: int | None = None,
) -> dict:
    """Feed inputs `seed * 100000 + i` (i = 0, 1, ...) to `try_input` until the budget or
    `max_inputs` is spent; the counts."""
    recorder = Recorder(campaign)
    deadline = time.monotonic() + budget_seconds
    index = 0
    while time.monotonic() < deadline and (max_inputs is None or index < max_inputs):
        try_input(seed * 100_000 + index, recorder)
        index += 1
    return recorder.counts


def _listing(directory: Path | None) -> set[str]:
    if directory is None or not directory.is_dir():
        return set()
    return {path.name for path in directory.iterdir()}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
