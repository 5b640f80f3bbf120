"""Every code block of README.md and docs/*.md runs as written, and prints what the page shows.

How blocks are marked (python, sh, console, text; `no-run` and `output` comments): see
tests/docs/blocks.py. Each page runs in its own temporary directory holding a copy of
ir_samples/, docs/ and mkdocs.yml, the files its commands read, so nothing is written into the
source tree.
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import (
    LANGUAGES,
    ROOT,
    Block,
    blocks,
    console_commands,
    pages,
    requires,
)

DRIVER = Path(__file__).with_name("run_blocks.py")
_CHECKER = doctest.OutputChecker()
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _steps(found: list[Block]) -> list[dict]:
    """The runnable blocks as the driver's steps, each with the output block that follows it."""
    steps: list[dict] = []
    for block in found:
        if block.output:
            steps[-1]["expected"] = block.text
        elif block.runs and block.language == "console":
            commands = console_commands(block)
            steps.append({"kind": "console", "where": block.where, "commands": commands})
        elif block.runs:
            steps.append({"kind": block.language, "where": block.where, "text": block.text})
    return steps


RUNNABLE = [page for page in pages() if _steps(blocks(page))]


def test_every_block_is_marked_as_what_it_is():
    """A known info string; no-run only on code; an output block right after a runnable one;
    console blocks start with a command. A block the tests would silently skip fails here."""
    for page in pages():
        previous: Block | None = None
        for block in blocks(page):
            assert block.language in LANGUAGES, f"{block.where}: info string {block.language!r}"
            if block.no_run is not None:
                assert block.language in ("python", "sh"), f"{block.where}: no-run on a non-code"
            if block.output:
                assert block.language == "text", f"{block.where}: output marks a text block"
                assert previous is not None and previous.runs, f"{block.where}: output of what?"
                assert previous.language != "console", f"{block.where}: console shows its own"
            if block.language == "console":
                assert block.text.startswith("$ "), f"{block.where}: a console block without $"
            previous = block


def test_the_pages_have_runnable_blocks():
    """The parametrised test below has something to run: README and the manual's guides."""
    names = {_name(page) for page in RUNNABLE}
    assert {"README.md", "docs/cli.md", "docs/scan-guide.md", "docs/deploying.md"} <= names


@pytest.mark.parametrize("page", RUNNABLE, ids=_name)
def test_code_blocks_run_as_written(page, tmp_path):
    for module in requires(page):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{_name(page)} needs {module}, which is not installed")
    steps = _steps(blocks(page))
    for folder in ("ir_samples", "docs"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    shutil.copy(ROOT / "mkdocs.yml", tmp_path)
    steps_file, results_file = tmp_path / ".steps.json", tmp_path / ".results.json"
    driver_steps = [
        {**step, "commands": [command.text for command in step.get("commands", [])]}
        for step in steps
    ]
    steps_file.write_text(json.dumps(driver_steps), encoding="utf-8")
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    subprocess.run(
        [sys.executable, str(DRIVER), str(steps_file), str(results_file)],
        cwd=tmp_path,
        check=True,
        timeout=1800,
        env={**os.environ, "PYTHONPATH": pythonpath, "OV_LOOPS_PROGRESS": "0"},
    )
    results = json.loads(results_file.read_text(encoding="utf-8"))
    for step, result in zip(steps, results):
        assert result["ok"], f"{step['where']} failed:\n{result['output']}\n{result['error']}"
        if step["kind"] == "console":
            _check_console(step, result)
        elif "expected" in step:
            _check_output(step["where"], step["expected"], result["output"])
    assert len(results) == len(steps)


def _check_console(step: dict, result: dict) -> None:
    commands = step["commands"]
    for index, (command, output, code) in enumerate(
        zip(commands, result["output"], result["exits"])
    ):
        where = f"{step['where']}: $ {command.text}"
        shows_exit = index + 1 < len(commands) and commands[index + 1].text == "echo $?"
        assert code == 0 or shows_exit, f"{where}: exit {code}\n{output}"
        _check_output(where, command.expected, output)


def _check_output(where: str, expected: str, printed: str) -> None:
    assert _CHECKER.check_output(expected, printed, _FLAGS), (
        f"{where} prints:\n{printed}\nthe page shows:\n{expected}"
    )
