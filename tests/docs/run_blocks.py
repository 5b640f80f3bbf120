"""Runs one page's code blocks in order, in the current directory: `python run_blocks.py IN OUT`.

IN is a JSON list of steps, `{"kind": "python" | "sh", "where": ..., "text": ...}` or
`{"kind": "console", "where": ..., "commands": [...]}`; OUT receives one result per step run,
`{"where", "ok", "output", "error", "exits"}`. Python blocks share one namespace (as one
reader's session); a failed step ends the run, since later blocks may build on it. Shell text
runs in bash with `ov-loops` and `python` meaning this interpreter (`python -m ov_loops`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import traceback

PRELUDE = """
ov-loops() { "$OV_LOOPS_DOCS_PYTHON" -m ov_loops "$@"; }
python() { "$OV_LOOPS_DOCS_PYTHON" "$@"; }
"""
SEPARATOR = "\x1f"  # printed with each console command's exit code after its output


def run_python(text: str, where: str, namespace: dict) -> dict:
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output):
            exec(compile(text, where, "exec"), namespace)
    except Exception:  # every failure of a block is its result
        return {"ok": False, "output": output.getvalue(), "error": traceback.format_exc()}
    return {"ok": True, "output": output.getvalue(), "error": ""}


def run_bash(script: str, cwd: str | None = None, **env: str) -> subprocess.CompletedProcess:
    """`script` in bash (from `cwd`, with `env` added), `ov-loops` and `python` meaning this
    interpreter; stdout and stderr together."""
    return subprocess.run(
        ["bash", "-c", PRELUDE + script],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
        env={
            **os.environ,
            "OV_LOOPS_DOCS_PYTHON": sys.executable,
            "PYTHONUNBUFFERED": "1",
            # the interpreter's scripts (benchmark_app) before anything else on PATH
            "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]),
            **env,
        },
    )


def run_sh(text: str) -> dict:
    done = run_bash("set -eo pipefail\n" + text)
    return {"ok": done.returncode == 0, "output": done.stdout, "error": f"exit {done.returncode}"}


def run_console(commands: list[str]) -> dict:
    """Every command in one bash, each followed by its exit code (kept as `$?` for the next)."""
    script = "".join(
        f'{command}\n__s=$?; printf "\\n{SEPARATOR}%d\\n" "$__s"; (exit "$__s")\n'
        for command in commands
    )
    done = run_bash(script)
    parts = done.stdout.split(f"\n{SEPARATOR}")
    outputs, exits = [parts[0]], []
    for part in parts[1:]:
        code, _, rest = part.partition("\n")
        exits.append(int(code))
        outputs.append(rest)
    return {"ok": len(exits) == len(commands), "output": outputs[:-1], "exits": exits, "error": ""}


def main(steps_path: str, results_path: str) -> None:
    with open(steps_path, encoding="utf-8") as steps_file:
        steps = json.load(steps_file)
    namespace: dict = {"__name__": "__main__"}
    results = []
    for step in steps:
        if step["kind"] == "python":
            result = run_python(step["text"], step["where"], namespace)
        elif step["kind"] == "sh":
            result = run_sh(step["text"])
        else:
            result = run_console(step["commands"])
        results.append({"where": step["where"], **result})
        if not result["ok"]:
            break
    with open(results_path, "w", encoding="utf-8") as results_file:
        json.dump(results, results_file)


if __name__ == "__main__":
    main(*sys.argv[1:3])
