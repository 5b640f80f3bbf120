"""Which Loop back edges need a computed copy on the CPU plugin: random bodies, each converted
with the copies that a candidate rule asks for, run on CPU (f32) and compared with the numpy
reference (issue 11, item 8).

A rule is a predicate `needs(value, parameters)` on a back edge's value (never called for a
carried Parameter the body returns unchanged). For each random body the script converts the
model once per rule, compiles each distinct set of copies once, runs several inferences in a
row on the one compiled model (a zero-trip run among them for Loops) and counts, per rule, the
bodies it got wrong. A rule is acceptable only with no failure.

    python benchmarks/back_edge_aliasing.py [--examples 500] [--seconds 600] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np
import openvino as ov
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ov_loops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
from onnx import numpy_helper  # noqa: E402

from ov_loops.loopir.passes.back_edges import CopyBackEdges  # noqa: E402
from tests import test_random_bodies  # noqa: E402
from tests.harness import assert_matches_onnxruntime, reference_oracle  # noqa: E402
from tests.onnx_builders import T, graph, model, node, typed  # noqa: E402

Rule = Callable[[ov.Output, list], bool]
BINARY = ["Add", "Sub", "Mul", "Max", "Min"]
UNARY = ["Neg", "Tanh", "Relu", "Abs"]
# The view steps: (ONNX op, its constant second inputs, attributes); UnsqueezeSqueeze is two ops.
VIEW_STEPS = {
    "Identity": ("Identity", [], {}),
    "Reshape": ("Reshape", [np.array([2], np.int64)], {}),
    "Cast": ("Cast", [], {"to": T.FLOAT}),
    "MulOne": ("Mul", [np.ones(2, np.float32)], {}),
    "AddZero": ("Add", [np.zeros(2, np.float32)], {}),
    "Expand": ("Expand", [np.array([2], np.int64)], {}),
    "Gather": ("Gather", [np.array([0, 1], np.int64)], {}),
    "Slice": ("Slice", [np.array([0]), np.array([2])], {}),
}
VIEWS = ["UnsqueezeSqueeze", *VIEW_STEPS]


# -- the rules ----------------------------------------------------------------------------------
def _always(value: ov.Output, loop) -> bool:
    return True


def _never(value: ov.Output, loop) -> bool:
    return False


VIEW_TYPES = {"Squeeze", "Unsqueeze", "Reshape", "Convert", "Broadcast", "Gather", "Slice"}
VIEW_TYPES |= {"StridedSlice", "Identity"}
ELEMENTWISE_TYPES = {"Add", "Subtract", "Multiply", "Maximum", "Minimum", "Negative", "Tanh"}
ELEMENTWISE_TYPES |= {"Relu", "Abs", "Divide", "Power", "Sigmoid", "Exp"}


def _is_parameter(value: ov.Output) -> bool:
    return value.get_node().get_type_name() == "Parameter"


def _through_views(value: ov.Output) -> ov.Output:
    """The value a chain of view ops (first inputs) starts from."""
    while value.get_node().get_type_name() in VIEW_TYPES:
        value = value.get_node().input_value(0)
    return value


def _view_of_parameter(value: ov.Output, loop) -> bool:
    return _is_parameter(_through_views(value))


def _view_or_reads_parameter(value: ov.Output, loop) -> bool:
    start = _through_views(value)
    return _is_parameter(start) or any(_is_parameter(x) for x in start.get_node().input_values())


def _brief(value: ov.Output, loop) -> bool:
    node = value.get_node()
    if node.get_type_name() in VIEW_TYPES or _is_parameter(value):
        return True
    return any(_is_parameter(x) for x in node.input_values())


def _chain_reaches(value: ov.Output, wanted) -> bool:
    """Whether a path back from `value` through view and elementwise ops reaches a Parameter
    that `wanted` accepts."""
    node = value.get_node()
    if node.get_type_name() == "Parameter":
        return wanted(node)
    if node.get_type_name() not in VIEW_TYPES | ELEMENTWISE_TYPES:
        return False
    return any(_chain_reaches(x, wanted) for x in node.input_values())


def _sliced(loop) -> set:
    parameters = loop.body.get_parameters()
    return {parameters[entry.body_parameter] for entry in loop.spec.sliced_inputs}


def _elementwise_chain_reaches_parameter(value: ov.Output, loop) -> bool:
    return _chain_reaches(value, lambda node: True)


def _chain_to_sliced(value: ov.Output, loop) -> bool:
    sliced = _sliced(loop)
    return _chain_reaches(value, lambda node: node in sliced)


def _chain_to_sliced_or_parameter(value: ov.Output, loop) -> bool:
    return _is_parameter(value) or _chain_to_sliced(value, loop)


def _view_chain_to_sliced_or_parameter(value: ov.Output, loop) -> bool:
    sliced = _sliced(loop)
    start = _through_views(value)
    return _is_parameter(value) or start.get_node() in sliced


RULES: dict[str, Rule] = {
    "implemented": CopyBackEdges.needs_copy,
    "always": _always,
    "never": _never,
    "view_of_parameter": _view_of_parameter,
    "view_or_reads_parameter": _view_or_reads_parameter,
    "brief": _brief,
    "elementwise_chain": _elementwise_chain_reaches_parameter,
    "chain_to_sliced": _chain_to_sliced,
    "chain_to_sliced_or_parameter": _chain_to_sliced_or_parameter,
    "views_to_sliced_or_parameter": _view_chain_to_sliced_or_parameter,
}


# -- random bodies ------------------------------------------------------------------------------
@st.composite
def bodies(draw):
    """(carried count, steps, outputs): steps are (kind, inputs, output); vectors have shape [2]."""
    carried = draw(st.integers(1, 3))
    pool = [f"c{k}_in" for k in range(carried)] + ["x_t", "w"]
    steps = []
    for index in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["binary"] * 3 + ["unary", "view", "view", "matmul"]))
        if kind == "binary":
            op = draw(st.sampled_from(BINARY))
            inputs = [draw(st.sampled_from(pool)), draw(st.sampled_from(pool))]
        else:
            op = {"unary": UNARY, "view": VIEWS, "matmul": ["MatMul"]}[kind]
            op = draw(st.sampled_from(op))
            inputs = [draw(st.sampled_from(pool))]
        steps.append((op, inputs, f"v{index}"))
        pool.append(f"v{index}")
    candidates = [name for name in pool if name != "w"]
    outputs = [draw(st.sampled_from(candidates)) for _ in range(carried + 1)]
    return carried, tuple(steps), tuple(outputs)


@st.composite
def original_bodies(draw):
    """The bodies of tests/test_random_bodies.py (binary elementwise ops, the iteration number
    `fi` among their inputs), in this script's form."""
    carried, steps, outputs = draw(test_random_bodies.bodies())
    steps = tuple((op, [left, right], out) for op, left, right, out in steps)
    return carried, steps, tuple(outputs)


def _constant(name: str, data: np.ndarray):
    return node("Constant", [], [name], value=numpy_helper.from_array(data, name))


def _step_nodes(op: str, inputs: list[str], out: str) -> list:
    if op == "UnsqueezeSqueeze":
        axes = f"{out}_axes"
        return [
            _constant(axes, np.array([0])),
            node("Unsqueeze", [inputs[0], axes], [f"{out}_wide"]),
            node("Squeeze", [f"{out}_wide", axes], [out]),
        ]
    if op in VIEW_STEPS:
        onnx_op, constants, attributes = VIEW_STEPS[op]
        names = [f"{out}_k{index}" for index in range(len(constants))]
        made = [_constant(name, data) for name, data in zip(names, constants)]
        return [*made, node(onnx_op, [inputs[0], *names], [out], **attributes)]
    if op == "MatMul":
        return [node("MatMul", [inputs[0], "m"], [out])]
    return [node(op, inputs, [out])]


def _nodes(steps) -> list:
    return [made for op, inputs, out in steps for made in _step_nodes(op, list(inputs), out)]


def _outer_inputs(carried: int) -> list:
    return [
        typed("w", T.FLOAT, [2]),
        typed("m", T.FLOAT, [2, 2]),
        *[typed(f"c{k}_0", T.FLOAT, [2]) for k in range(carried)],
    ]


def _outer_outputs(carried: int) -> list:
    finals = [typed(f"c{k}", T.FLOAT, [2]) for k in range(carried)]
    return [*finals, typed("ys", T.FLOAT, [None, 2])]


def _reads_fi(steps) -> bool:
    """Whether a step reads the iteration number (only then does the body compute it: any
    extra op in the body can hide a fault)."""
    return any("fi" in inputs for _, inputs, _ in steps)


def loop_model(carried, steps, outputs):
    body = graph(
        [
            node("Gather", ["X", "i"], ["x_t"], axis=0),
            *([node("Cast", ["i"], ["fi"], to=T.FLOAT)] if _reads_fi(steps) else []),
            *_nodes(steps),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [
            typed("i", T.INT64, []),
            typed("cond_in", T.BOOL, []),
            *[typed(f"c{k}_in", T.FLOAT, [2]) for k in range(carried)],
        ],
        [typed("keep", T.BOOL, []), *[typed(name, T.FLOAT, [2]) for name in outputs]],
        name="body",
    )
    loop = node(
        "Loop",
        ["M", "", *[f"c{k}_0" for k in range(carried)]],
        [*[f"c{k}" for k in range(carried)], "ys"],
        body=body,
    )
    inputs = [typed("M", T.INT64, []), typed("X", T.FLOAT, [None, 2]), *_outer_inputs(carried)]
    return model(graph([loop], inputs, _outer_outputs(carried)))


def scan_model(carried, steps, outputs):
    body = graph(
        _nodes(steps),
        [
            *[typed(f"c{k}_in", T.FLOAT, [2]) for k in range(carried)],
            typed("x_t", T.FLOAT, [2]),
            *([typed("fi", T.FLOAT, [])] if _reads_fi(steps) else []),
        ],
        [typed(name, T.FLOAT, [2]) for name in outputs],
        name="body",
    )
    scan = node(
        "Scan",
        [*[f"c{k}_0" for k in range(carried)], "X", *(["counter"] if _reads_fi(steps) else [])],
        [*[f"c{k}" for k in range(carried)], "ys"],
        body=body,
        num_scan_inputs=2 if _reads_fi(steps) else 1,
    )
    inputs = [typed("X", T.FLOAT, [None, 2])]
    inputs += [typed("counter", T.FLOAT, [None])] if _reads_fi(steps) else []
    inputs += _outer_inputs(carried)
    return model(graph([scan], inputs, _outer_outputs(carried)))


def runs_of(body, scan: bool, seed: int) -> list[dict]:
    carried, steps, _ = body
    rng = np.random.default_rng(seed)
    lengths = (3, 5, 1, 4) if scan else (3, 0, 5, 2)
    runs = []
    for steps_count in lengths:
        feeds = test_random_bodies._feeds(carried, steps_count, rng, loop=not scan)
        if not _reads_fi(steps):
            feeds.pop("counter", None)
        feeds["m"] = rng.uniform(-2, 2, (2, 2)).astype(np.float32)
        runs.append(feeds)
    return runs


# -- running one body under every rule ----------------------------------------------------------
class Trial:
    """Converts with one rule's copies, recording which back edges got one."""

    def __init__(self, rule: Rule):
        self.rule = rule
        self.decisions: list[bool] = []

    def needs(self, value: ov.Output, loop) -> bool:
        decision = bool(self.rule(value, loop))
        self.decisions.append(decision)
        return decision


def check_body(body, scan: bool, seed: int, directory: Path) -> dict[str, str | None]:
    """Per rule: None when right, else the first mismatch's text; 'refused: ...' when the
    conversion failed (without copies, MOC's EliminateLoopInputsOutputs can throw on a Loop
    whose carried value is another carried Parameter)."""
    made = (scan_model if scan else loop_model)(*body)
    runs = runs_of(body, scan, seed)
    verdicts: dict[tuple[bool, ...], str | None] = {}
    outcome = {}
    for name, rule in RULES.items():
        trial = Trial(rule)
        try:
            with mock.patch.object(CopyBackEdges, "needs_copy", staticmethod(trial.needs)):
                conversion = ov_loops.translate(made)
        except Exception as error:  # noqa: BLE001  # e.g. OpenVINO's MOC failing without a copy
            outcome[name] = f"refused: {type(error).__name__}: {error}"[:200]
            continue
        key = tuple(trial.decisions)
        if key not in verdicts:
            verdicts[key] = _verdict(made, runs, directory / name, conversion)
        outcome[name] = verdicts[key]
    return outcome


def _verdict(made, runs, directory: Path, conversion) -> str | None:
    directory.mkdir()
    try:
        assert_matches_onnxruntime(
            made, runs, directory, oracle=reference_oracle, translate=lambda _: conversion
        )
    except AssertionError as error:
        lines = str(error).strip().splitlines() or ["mismatch"]
        return next((line for line in lines if line.startswith("run ")), lines[0])[:300]
    return None


class Tally:
    """Per rule: bodies checked, wrong, refused, and the first few wrong bodies."""

    def __init__(self, rules: list[str]):
        self.rules = rules
        self.bodies = 0
        self.checked: Counter[str] = Counter()
        self.wrong: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.examples: dict[str, list] = {name: [] for name in rules}

    def add(self, body, scan: bool, outcome: dict[str, str | None]) -> None:
        self.bodies += 1
        for name, verdict in outcome.items():
            if verdict is not None and verdict.startswith("refused"):
                self.refused[name] += 1
                continue
            self.checked[name] += 1
            if verdict is not None:
                self.wrong[name] += 1
                if len(self.examples[name]) < 8:
                    self.examples[name].append(("scan" if scan else "loop", body, verdict))

    def report(self, examples: bool) -> None:
        print(f"bodies: {self.bodies}", flush=True)
        for name in self.rules:
            counts = f"checked {self.checked[name]:5d}  wrong {self.wrong[name]:5d}"
            print(f"  {name:28s} {counts}  refused {self.refused[name]}", flush=True)
            for example in self.examples[name] if examples else ():
                print("      ", example, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", nargs="*", choices=sorted(RULES), default=sorted(RULES))
    args = parser.parse_args()
    for name in set(RULES) - set(args.rules):
        del RULES[name]
    tally = Tally(list(RULES))
    deadline = time.monotonic() + args.seconds

    @settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(body=st.one_of(bodies(), original_bodies()), scan=st.booleans())
    def explore(body, scan):
        if time.monotonic() > deadline:
            return
        with tempfile.TemporaryDirectory() as scratch:
            outcome = check_body(body, scan, args.seed + tally.bodies, Path(scratch))
        tally.add(body, scan, outcome)
        if tally.bodies % 25 == 0:
            tally.report(examples=False)

    explore()
    tally.report(examples=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
