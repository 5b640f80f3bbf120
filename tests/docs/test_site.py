"""The manual builds with `mkdocs build --strict`, and every link of README and docs/ lands.

mkdocs checks docs/ (links, anchors, pages missing from nav); README is not part of the site,
so its links and anchors are checked here, and so is that a linked heading has the same anchor
on GitHub as in the site. The quick start's second command is the one CI runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import ROOT, blocks, pages
from tests.docs.run_blocks import run_bash

_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.+?)\s*#*\s*$")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (it is in the test extra)")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_manual_builds_strict(tmp_path):
    built = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    for page in (ROOT / "docs").glob("*.md"):
        name = "index.html" if page.stem == "index" else f"{page.stem}/index.html"
        assert (tmp_path / "site" / name).is_file(), name


def test_the_strict_build_fails_on_a_broken_anchor(tmp_path):
    """The build above would pass on a broken anchor without mkdocs.yml's `validation`."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with (tmp_path / "docs" / "index.md").open("a", encoding="utf-8") as index:
        index.write("\n[broken](cli.md#no-such-heading)\n")
    built = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert built.returncode != 0
    assert "no-such-heading" in built.stderr, built.stderr


def test_nav_lists_every_page_of_docs():
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with mkdocs (the test extra)")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = {next(iter(entry.values())) for entry in config["nav"]}
    assert listed == {page.name for page in (ROOT / "docs").glob("*.md")}


def _headings(path: Path) -> list[str]:
    """The heading texts of a markdown file, outside fenced blocks, code spans unquoted."""
    texts, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := _HEADING.match(line)):
            texts.append(heading["text"].replace("`", ""))
    return texts


def _github_anchor(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def test_links_and_anchors_resolve_the_same_on_github_and_in_the_site():
    toc = pytest.importorskip("markdown.extensions.toc", reason="markdown comes with mkdocs")
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for link in _LINK.finditer(text):
            target = link["target"]
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}: ({target})"
            assert file.exists(), f"{where}: no such file"
            if anchor:
                headings = _headings(file)
                site = {toc.slugify(heading, "-") for heading in headings}
                github = {_github_anchor(heading) for heading in headings}
                assert anchor in site and anchor in github, f"{where}: no such heading"


def _quick_start() -> list[str]:
    readme = ROOT / "README.md"
    first = next(block for block in blocks(readme) if block.language == "sh")
    return first.text.splitlines()


def test_the_quick_start_is_two_commands_and_the_second_is_what_ci_runs():
    commands = _quick_start()
    assert len(commands) == 2, commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == commands[1] == 'pip install ".[test]" && python -m pytest'


def test_the_quick_start_conversion_writes_into_the_ignored_out_folder(tmp_path):
    """The first command, less its install, from a copy of the samples: it writes only under
    out/, which .gitignore keeps out of the checkout."""
    install, _, convert = _quick_start()[0].partition(" && ")
    assert install == "pip install ."
    shutil.copytree(ROOT / "ir_samples", tmp_path / "ir_samples")
    before = set(tmp_path.rglob("*"))
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    done = run_bash(convert, cwd=str(tmp_path), PYTHONPATH=pythonpath)
    assert done.returncode == 0, done.stdout
    written = {path.relative_to(tmp_path).as_posix() for path in set(tmp_path.rglob("*")) - before}
    assert written == {"out", "out/rnn_scan.xml", "out/rnn_scan.bin"}
    assert "/out/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_the_readme_is_a_front_door():
    """About 200 lines (issue 21): what it is, the quick start, the tours of convert, validate,
    check and scan, the comparison with OpenVINO's frontend and onnxruntime, and where to go
    next; the manual is docs/."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    sections = [line[3:] for line in readme.splitlines() if line.startswith("## ")]
    assert sections == [
        "Quick start",
        "Convert",
        "Validate",
        "Check",
        "Loops in Python",
        "Python API",
        "Compared with OpenVINO and onnxruntime",
        "Where to go next",
    ]
