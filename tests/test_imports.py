"""The package's import graph has no cycle: between modules, between folders, and between the
top-level parts (`frontends`, `loopir`, `lower`, ...), counting function-level (lazy) imports,
`importlib.import_module` of a literal name, the face's names and the CLI's commands; and
`lower/` takes of the passes only the pipeline. Read from the source (ast), so nothing is
imported but the face and the CLI's table of commands."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import ov_loops
from ov_loops.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ov_loops"


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _resolved(name: str) -> str | None:
    """The module `name` is, or is in (`ov_loops.api.convert` -> `ov_loops.api`)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, path: Path) -> Iterator[str]:
    """The names `module` imports anywhere in its text (not under `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
        for node in ast.walk(branch)
    }
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*kept, base] if base else kept)
            yield from (f"{base}.{alias.name}" for alias in node.names)
        elif _is_import_module(node) and isinstance(node.args[0], ast.Constant):
            yield str(node.args[0].value)


def _is_import_module(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) in ("importlib.import_module", "import_module")
        and bool(node.args)
    )


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports; the face (`ov_loops`) imports the home of
    each public name when it is first asked for, the CLI the module of the command it runs."""
    graph = {}
    for module, path in MODULES.items():
        targets = (_resolved(name) for name in _imported(module, path))
        graph[module] = {target for target in targets if target and target != module}
    graph["ov_loops"] |= set(ov_loops._HOMES.values())
    graph["ov_loops.cli.main"] |= {module for module, _ in COMMANDS.values()}
    return graph


def _folder(module: str) -> str:
    """The folder of a module; a module at the package's root is its own node."""
    folder = ".".join(MODULES[module].parent.relative_to(ROOT).parts)
    return module if folder == "ov_loops" else folder


def _part(module: str) -> str:
    """The top-level part of the package a module is in (`ov_loops.frontends`, ...)."""
    return ".".join(module.split(".")[:2])


def _grouped(graph: dict[str, set[str]], group: Callable[[str], str]) -> dict[str, set[str]]:
    grouped: dict[str, set[str]] = {}
    for source, targets in graph.items():
        grouped.setdefault(group(source), set()).update(
            group(target) for target in targets if group(target) != group(source)
        )
    return grouped


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while not component or component[-1] != node:
                        component.append(stack.pop())
                        on_stack.discard(component[-1])
                    if len(component) > 1:
                        found.append(sorted(component))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(sorted(graph.get(target, ())))))
            elif target in on_stack:
                low[node] = min(low[node], index[target])
    return found


GRAPH = _graph()


@pytest.mark.parametrize(
    "level, group",
    [("module", lambda module: module), ("folder", _folder), ("part", _part)],
)
def test_no_import_cycle(level, group):
    graph = GRAPH if level == "module" else _grouped(GRAPH, group)
    assert _cycles(graph) == [], level


def test_the_graph_holds_function_level_and_importlib_imports():
    """What the cycle test reads: lazy imports count (convert_options.py imports the pipeline in a
    function), and so do the face's names and `importlib.import_module` of a literal name."""
    assert "ov_loops.loopir.passes.pipeline" in GRAPH["ov_loops.convert_options"]
    assert "ov_loops.frontends.theano.scan" in GRAPH["ov_loops"]
    assert "ov_loops.cli.check" in GRAPH["ov_loops.cli.main"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_lower_takes_of_the_passes_only_the_pipeline():
    for module, targets in GRAPH.items():
        if module.startswith("ov_loops.lower."):
            internals = {
                target
                for target in targets
                if target.startswith("ov_loops.loopir.passes")
                and target != "ov_loops.loopir.passes.pipeline"
            }
            assert internals == set(), module


def test_a_pass_takes_nothing_from_another_pass():
    """What passes share (analyses, edits, post-loop steps, plugin limits) lives in `loopir/`,
    not in one of them: a pass module imports of its siblings only the protocol and the levels."""
    allowed = {"ov_loops.loopir.passes.base", "ov_loops.loopir.passes.levels"}
    for module, targets in GRAPH.items():
        if module.startswith("ov_loops.loopir.passes.") and not module.endswith(".pipeline"):
            siblings = {t for t in targets if t.startswith("ov_loops.loopir.passes.")}
            assert siblings <= allowed, (module, siblings - allowed)
