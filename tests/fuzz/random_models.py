"""Random valid ONNX models with nested If / Loop / Scan bodies, for differential fuzzing.

`random_model(seed)` builds one model from a seed, deterministically, in one of three forms:

- plain (opset 17): control flow nested 1 to 3 deep (the depth is drawn per model) around the
  inputs a, b, s (floats), X (float [T, 2], a sequence Scans and Loops run over), M (an int64
  trip count) and flag (a bool condition); the generator is tests/fuzz/random_control.py;
- streamable: the same, but X is read only by one top-level forward Scan or Loop over its rows
  whose body reads neither the iteration number nor X otherwise, and the model's outputs are
  that node's: fed X in chunks, a `--stateful` conversion must give the whole run's outputs
  (`RandomModel.chunks`);
- Scan-8 (opset 8): a top-level Scan-8 over X [B, T, 2] with initial states h0, h1 [B, ...] and,
  mostly, sequence_lens `lens` [B] (lengths at or below T).

A third of the models get static input shapes (`RandomModel.input`, convert's `--input`): then
every run has the same T (and B). Every model has three runs on one compiled model: some
iterations (M >= 1, flag true), then zero iterations (M 0, flag false, lens 0, T 0 where it is
dynamic), then any. The model passes `onnx.checker.check_model(full_check=True)`; its feeds are
drawn from the same seed, and `description` names the structure (what a failure report shows).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.fuzz.random_control import ControlFlowGenerator
from tests.fuzz.random_graphs import Scope, Shape, finish, typed

SEQUENCE = "X"  # float [T, 2] (Scan-8: [B, T, 2]), scanned and looped over
TRIPS = "M"  # int64 scalar, a run-time trip count
FLAG = "flag"  # bool scalar, a run-time condition
LENGTHS = "lens"  # int64 [B], a Scan-8's sequence_lens
FLOAT_INPUTS = {"a": (2,), "b": (2,), "s": ()}
FORMS = ["plain"] * 3 + ["streamable", "scan8"]
STATIC_SHARE = 1 / 3


@dataclass
class RandomModel:
    """A model, the feeds of each run (all runs share one compiled model), its structure, the
    static input shapes to convert it with (`input=`, None: as declared) and, for a streamable
    model, the lengths of the chunks of X each run is fed in (else None)."""

    seed: int
    model: onnx.ModelProto
    runs: list[dict[str, np.ndarray]]
    description: str
    input: str | None = None
    chunks: list[list[int]] | None = None


def random_model(seed: int) -> RandomModel:
    """The model drawn from `seed`, with its runs (and chunks) drawn from it too."""
    rng = random.Random(seed)
    form = rng.choice(FORMS)
    static = rng.random() < STATIC_SHARE
    dims = _Dims(np.random.default_rng(seed), static, form == "scan8")
    if form == "scan8":
        graph, description = _scan8_graph(seed)
    else:
        graph, description = _graph(seed, streamed=form == "streamable")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", dims.opset)])
    model.ir_version = 10
    runs = [dims.feeds(graph, kind) for kind in ("some", "none", "any")]
    chunks = [dims.chunks(run[SEQUENCE].shape[0]) for run in runs] if form == "streamable" else None
    described = f"{form}{', static ' + dims.input(graph) if static else ''}: {description}"
    return RandomModel(seed, model, runs, described, dims.input(graph) if static else None, chunks)


def write_model(seed: int, directory: Path) -> list[str]:
    """Write the model of `seed` (model.onnx) and its runs (run0.npz, ...) into `directory`;
    lines saying what it is and how to convert and check it by hand."""
    made = random_model(seed)
    directory.mkdir(parents=True, exist_ok=True)
    onnx.save(made.model, directory / "model.onnx")
    for index, feeds in enumerate(made.runs):
        np.savez(directory / f"run{index}.npz", **feeds)
    shapes = f" --input '{made.input}'" if made.input else ""
    lines = [
        f"{directory / 'model.onnx'}: {made.description}",
        f"  ov-loops convert model.onnx --compress_to_fp16=False --optimize LEVEL{shapes}",
        f"  ov-loops check model.onnx --inputs run0.npz (runs 0 to {len(made.runs) - 1})",
    ]
    if made.chunks:
        chunks = "; ".join(f"run{k}: X={','.join(map(str, c))}" for k, c in enumerate(made.chunks))
        lines.append(f"  --stateful, then check --chunks per run: {chunks}")
    return lines


def _main_scope(sequence: bool) -> Scope:
    floats = {**FLOAT_INPUTS, **({SEQUENCE: (None, 2)} if sequence else {})}
    return Scope(floats, [TRIPS], [FLAG], depth=0)


def _graph(seed: int, streamed: bool) -> tuple[onnx.GraphProto, str]:
    """A plain or streamable main graph and its description."""
    generator = ControlFlowGenerator(seed, sequence=SEQUENCE)
    rng = generator.rng
    main = _main_scope(sequence=not streamed)
    if streamed:  # one top-level loop: others would keep state too, and X is for it alone
        depth, generator.max_depth, generator.sequence = generator.max_depth, 0, None
        generator.fill(main, rng.randint(0, 2))
        generator.max_depth, generator.sequence = depth, SEQUENCE
    else:
        generator.fill(main, rng.randint(0, 2))
    before = set(main.floats)
    if streamed:
        rng.choice([generator.make_loop, generator.make_scan])(main, streamed=True)
    else:
        kinds = [generator.make_loop, generator.make_loop, generator.make_scan, generator.make_if]
        rng.choice(kinds)(main)
    wanted = [name for name in main.floats if name not in before]
    if not streamed:
        generator.fill(main, rng.randint(0, 2))
        # in the order of main.floats (a dict): a set's order changes with the hash seed
        extra = [name for name in main.floats if name in main.local and name not in wanted]
        wanted += sorted(rng.sample(extra, min(len(extra), rng.randint(0, 2))))
    inputs = [typed(name, TensorProto.FLOAT, shape) for name, shape in FLOAT_INPUTS.items()]
    inputs += [
        typed(SEQUENCE, TensorProto.FLOAT, (None, 2)),
        typed(TRIPS, TensorProto.INT64, ()),
        typed(FLAG, TensorProto.BOOL, ()),
    ]
    outputs = [typed(name, TensorProto.FLOAT, main.floats[name]) for name in wanted]
    graph = helper.make_graph(main.nodes, f"random_{seed}", inputs, outputs)
    return graph, " ".join(main.parts)


def _scan8_graph(seed: int) -> tuple[onnx.GraphProto, str]:
    """Opset 8: a top-level Scan-8 over X [B, T, 2] (and -X), states from inputs h0, h1
    [B, ...], sequence_lens mostly; the Scan's outputs are the model's."""
    generator = ControlFlowGenerator(seed, opset=8)
    rng = generator.rng
    main = _main_scope(sequence=False)
    generator.fill(main, rng.randint(0, 2))
    sources = [SEQUENCE]
    if rng.random() < 0.4:
        sources.append(generator.emit(main, "Neg", [SEQUENCE], "sequence"))
    states = [rng.choice([(), (2,), (2, 2)]) for _ in range(rng.randint(0, 2))]
    stacked = [rng.choice([(), (2,)]) for _ in range(rng.randint(0, 2))]
    states = states or ([(2,)] if not stacked else [])
    lengths = LENGTHS if rng.random() < 0.75 else ""
    directions = [rng.choice([0, 0, 1]) for _ in sources]
    body, states_in, elements_in = generator.scan_body(main, states, [(2,)] * len(sources))
    outs = finish(body, generator, [(s, True) for s in states + stacked])
    body_inputs = [typed(n, TensorProto.FLOAT, s) for n, s in zip(states_in, states)]
    body_inputs += [typed(n, TensorProto.FLOAT, (2,)) for n in elements_in]
    results = [typed(n, TensorProto.FLOAT, s) for n, s in zip(outs, states + stacked)]
    initial = [f"h{index}" for index in range(len(states))]
    shapes: list[Shape] = [(None, *s) for s in states] + [(None, None, *s) for s in stacked]
    attributes = {"directions": directions} if any(directions) else {}
    outputs = generator.outputs(
        main,
        "Scan",
        [lengths, *initial, *sources],
        shapes,
        body=generator.body_graph(body, body_inputs, results),
        num_scan_inputs=len(sources),
        **attributes,
    )
    inputs = [typed(name, TensorProto.FLOAT, shape) for name, shape in FLOAT_INPUTS.items()]
    inputs += [typed(SEQUENCE, TensorProto.FLOAT, (None, None, 2))]
    inputs += [typed(TRIPS, TensorProto.INT64, ()), typed(FLAG, TensorProto.BOOL, ())]
    inputs += [typed(LENGTHS, TensorProto.INT64, (None,))] if lengths else []
    inputs += [typed(h, TensorProto.FLOAT, (None, *s)) for h, s in zip(initial, states)]
    results = [typed(name, TensorProto.FLOAT, s) for name, s in zip(outputs, shapes)]
    graph = helper.make_graph(main.nodes, f"random_{seed}", inputs, results)
    described = f"Scan8(lens={'yes' if lengths else 'no'},directions={directions},"
    described += f"states={len(states)},scan={len(stacked)})[{' '.join(body.parts)}]"
    return graph, described


class _Dims:
    """The feeds of a model's runs: the lengths T (and batch B) of X, fixed for static shapes,
    and the other inputs drawn fresh for each run."""

    def __init__(self, rng: np.random.Generator, static: bool, batched: bool) -> None:
        self.rng, self.static, self.batched = rng, static, batched
        self.opset = 8 if batched else 17
        self.length = int(rng.choice([0, 1, 2, 3, 4, 4], p=[0.05, 0.2, 0.25, 0.25, 0.15, 0.1]))
        self.batch = int(rng.integers(1, 4))

    def input(self, graph: onnx.GraphProto) -> str:
        """convert's --input for static shapes: every input of a dynamic dim, fixed."""
        return ",".join(
            f"{value.name}[{','.join(str(d) for d in self._shape(value))}]"
            for value in graph.input
            if any(not d.HasField("dim_value") for d in value.type.tensor_type.shape.dim)
        )

    def _shape(self, value: onnx.ValueInfoProto) -> list[int]:
        dims = [d.dim_value if d.HasField("dim_value") else None for d in _dims_of(value)]
        if value.name == SEQUENCE:
            return [self.batch, self.length, 2] if self.batched else [self.length, 2]
        return [self.batch if d is None else d for d in dims]  # lens, h0, h1: [B, ...]

    def feeds(self, graph: onnx.GraphProto, kind: str) -> dict[str, np.ndarray]:
        """The feeds of one run: "some" iterations, "none" (zero trips, a false condition,
        lengths 0, an empty X where its length is dynamic) or "any"."""
        rng = self.rng
        length = self.length if self.static else int(rng.integers(0 if kind == "any" else 1, 5))
        if kind == "none" and not self.static and rng.random() < 0.5:
            length = 0
        batch = self.batch if self.static else int(rng.integers(1, 4))
        feeds = {}
        for value in graph.input:
            dims = self._shape(value)
            if value.name == SEQUENCE:
                dims = [batch, length, 2] if self.batched else [length, 2]
            elif value.name == LENGTHS:
                high = 1 if kind == "none" else length + 1
                feeds[LENGTHS] = rng.integers(0, high, batch).astype(np.int64)
                continue
            elif value.name.startswith("h"):
                dims = [batch, *dims[1:]]
            feeds[value.name] = rng.uniform(-1, 1, dims).astype(np.float32)
        trips = {"some": (1, 4), "none": (0, 1), "any": (0, 4)}[kind]
        feeds[TRIPS] = np.array(rng.integers(*trips), np.int64)
        feeds[FLAG] = np.array({"some": True, "none": False, "any": rng.random() < 0.7}[kind])
        return feeds

    def chunks(self, length: int) -> list[int]:
        """Two or three chunk lengths summing to `length` (a chunk may be empty)."""
        count = int(self.rng.integers(1, 3))
        cuts = sorted(int(cut) for cut in self.rng.integers(0, length + 1, count))
        bounds = [0, *cuts, length]
        return [end - start for start, end in zip(bounds, bounds[1:])]


def _dims_of(value: onnx.ValueInfoProto):
    return value.type.tensor_type.shape.dim
