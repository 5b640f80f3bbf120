"""The fenced code blocks of README.md and docs/*.md, and what the tests do with each.

A block's info string says what it is:
- ```python: run (every python block of a page in one fresh namespace, in page order);
- ```sh: run as one bash script (`set -eo pipefail`), `ov-loops` being `python -m ov_loops`;
- ```console: `$ ` lines are commands, the lines after one are what it prints (compared, with
  doctest's ELLIPSIS and NORMALIZE_WHITESPACE); a command must exit 0 unless the next command
  is `echo $?`, which shows its exit code;
- ```text: not run (a synopsis, or an illustrative or recorded output the prose says is one).

A page that runs only with an optional dependency says so once, anywhere in it:
`<!-- requires: MODULE -->` (its blocks are skipped, with that reason, when MODULE is absent).

Two HTML comments (invisible on GitHub and in the site) on the line before a fence mark it:
- `<!-- no-run: REASON -->`: a python or sh block the tests do not run, and why;
- `<!-- output -->`: a text block that is what the runnable block above it prints (compared).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("python", "sh", "console", "text")

_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>```+)\s*(?P<info>\S*)\s*$")
_NO_RUN = re.compile(r"^\s*<!-- no-run: (?P<reason>.+?) -->\s*$")
_OUTPUT = re.compile(r"^\s*<!-- output -->\s*$")
_REQUIRES = re.compile(r"^\s*<!-- requires: (?P<module>[\w.]+) -->\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, the line of its opening fence, info string and text."""

    page: str
    line: int
    language: str
    text: str
    no_run: str | None = None  # the reason, when marked no-run
    output: bool = False  # a text block marked as the output of the block above

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.language in ("python", "sh", "console") and self.no_run is None


def pages() -> list[Path]:
    """README.md and every page of docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    page = path.relative_to(ROOT).as_posix()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = [line[indent:] for line in lines[index + 1 : end]]
        marker = _previous_line(lines, index)
        no_run = _NO_RUN.match(marker)
        found.append(
            Block(
                page,
                index + 1,
                opening["info"],
                "\n".join(body) + "\n",
                no_run["reason"] if no_run else None,
                bool(_OUTPUT.match(marker)),
            )
        )
        index = end + 1
    return found


def requires(path: Path) -> list[str]:
    """The modules a page's blocks need (its `<!-- requires: MODULE -->` comments)."""
    return _REQUIRES.findall(path.read_text(encoding="utf-8"))


def _previous_line(lines: list[str], index: int) -> str:
    """The last non-blank line before line `index`, or ''."""
    for line in reversed(lines[:index]):
        if line.strip():
            return line
    return ""


@dataclass(frozen=True)
class Command:
    """A `$ ` command of a console block, and what the block says it prints."""

    text: str
    expected: str


def console_commands(block: Block) -> list[Command]:
    """The commands of a console block (a trailing `\\` continues a command) and their output."""
    commands: list[Command] = []
    command: list[str] = []
    expected: list[str] = []
    lines = iter(block.text.splitlines())
    for line in lines:
        if not line.startswith("$ "):
            expected.append(line)
            continue
        if command:
            commands.append(Command("\n".join(command), "\n".join(expected)))
        command, expected = [line[2:]], []
        while command[-1].endswith("\\"):
            command.append(next(lines))
    if command:
        commands.append(Command("\n".join(command), "\n".join(expected)))
    return commands
