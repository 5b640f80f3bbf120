"""Random valid ONNX models with nested If / Loop / Scan bodies, for differential fuzzing.

`random_model(seed)` builds one model from a seed, deterministically: control flow nested 1 to 3
deep (the depth is drawn per model), loop-carried values, scan outputs (Loop and Scan), values
captured from enclosing scopes (including an outer loop's iteration number as an inner trip
count), If branches returning values of equal or differing shapes, trip counts constant, computed
at run time or absent, and conditions constant, computed or absent. Every loop is bounded: a Loop
without a trip count stops on `i < K` in its body. Values stay finite: products take a tanh of one
factor. The model passes `onnx.checker.check_model(full_check=True)`; its feeds are drawn from the
same seed, and `description` names the structure (what a failure report shows next to the seed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

Shape = tuple  # of dims: int, or None where the length is only known at run time

SEQUENCE = "X"  # float [T, 2], scanned by Scans
TRIPS = "M"  # int64 scalar, a run-time trip count
FLAG = "flag"  # bool scalar, a run-time condition
FLOAT_INPUTS = {"a": (2,), "b": (2,), "s": ()}
BINARY = ["Add", "Sub", "Mul", "Max", "Min"]
# No Abs: OpenVINO's CPU plugin (2026.4.1) runs Abs in place on a Concat's output and corrupts
# the Concat's other readers, loops or not (its own frontend's IR does the same).
UNARY = ["Neg", "Tanh", "Sigmoid"]
RANK1 = [(1,), (2,), (4,)]
OPSET = 17


@dataclass
class RandomModel:
    """A model, the feeds of each run (all runs share one compiled model) and its structure."""

    seed: int
    model: onnx.ModelProto
    runs: list[dict[str, np.ndarray]]
    description: str


@dataclass
class _Scope:
    """The values a graph under construction can read: its own and its enclosing scopes'."""

    floats: dict[str, Shape]
    ints: list[str]
    bools: list[str]
    depth: int
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    local: set[str] = field(default_factory=set)
    parts: list[str] = field(default_factory=list)  # descriptions of its control-flow nodes

    def child(self) -> _Scope:
        return _Scope(dict(self.floats), list(self.ints), list(self.bools), self.depth + 1)

    def static(self) -> dict[str, Shape]:
        return {name: s for name, s in self.floats.items() if None not in s}


def _typed(name: str, elem_type: int, shape: Shape | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, None if shape is None else list(shape))


def _broadcast(left: Shape, right: Shape) -> Shape | None:
    """The broadcast shape when it is known statically (a scalar or [1] goes with anything)."""
    for small, big in ((left, right), (right, left)):
        if small in ((), (1,)) and (big != () or small == ()):
            return big
    if None in left or None in right:
        return None
    try:
        return tuple(np.broadcast_shapes(left, right))
    except ValueError:
        return None


class _Generator:
    """Draws one model; every choice comes from `self.rng`."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.max_depth = self.rng.randint(1, 3)
        self.count = 0

    # -- values --------------------------------------------------------------------------------
    def name(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, scope: _Scope, op: str, inputs: list[str], kind: str = "f", shape=(), **attrs):
        """Append a node with one output of `kind` (f: float of `shape`, i: int64 scalar, b: bool
        scalar, anything else: not offered to later nodes)."""
        out = self.name()
        scope.nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{self.count}", **attrs))
        scope.local.add(out)
        if kind == "f":
            scope.floats[out] = shape
        elif kind in ("i", "b"):
            (scope.ints if kind == "i" else scope.bools).append(out)
        return out

    def constant(self, scope: _Scope, array: np.ndarray, kind: str = "f") -> str:
        tensor = numpy_helper.from_array(array, self.name("k"))
        return self.emit(scope, "Constant", [], kind, tuple(array.shape), value=tensor)

    def value_of(self, scope: _Scope, shape: Shape) -> str:
        """A float value of exactly `shape`: an existing one, or a new one made from a scalar."""
        if shape == (None,):  # any vector: a loop-carried value whose length may change
            vectors = [name for name, s in scope.floats.items() if len(s) == 1]
            return self.rng.choice(vectors) if vectors else self.value_of(scope, (2,))
        existing = [name for name, s in scope.floats.items() if s == shape]
        if existing and self.rng.random() < 0.8:
            return self.rng.choice(existing)
        scalars = [name for name, s in scope.floats.items() if s == ()]
        weights = np.asarray(self.rng.choices([-1.0, 0.5, 1.0, 2.0], k=int(np.prod(shape))))
        scale = self.constant(scope, weights.astype(np.float32).reshape(shape))
        return self.emit(scope, "Mul", [self.rng.choice(scalars), scale], shape=shape)

    def condition(self, scope: _Scope) -> str:
        """A bool scalar: a constant, an existing one or a comparison of two float scalars."""
        draw = self.rng.random()
        if draw < 0.15:  # a constant (the frontend may fold an If on it)
            return self.constant(scope, np.array(self.rng.random() < 0.5), "b")
        if scope.bools and draw < 0.55:
            return self.rng.choice(scope.bools)
        scalars = [name for name, s in scope.floats.items() if s == ()]
        left, right = self.rng.choice(scalars), self.rng.choice(scalars)
        return self.emit(scope, self.rng.choice(["Less", "Greater"]), [left, right], "b")

    # -- plain ops -----------------------------------------------------------------------------
    def fill(self, scope: _Scope, count: int) -> None:
        for _ in range(count):
            draw = self.rng.random()
            if draw < 0.3 and scope.depth < self.max_depth:
                self.rng.choice([self.make_if, self.make_loop, self.make_scan])(scope)
            elif draw < 0.65:
                self.binary(scope)
            elif draw < 0.8:
                self.unary(scope)
            elif draw < 0.9:
                self.emit(scope, "ReduceSum", [self.any_float(scope)], keepdims=0)
            else:
                self.concat(scope)

    def any_float(self, scope: _Scope) -> str:
        local = [name for name in scope.floats if name in scope.local]
        pool = local if local and self.rng.random() < 0.6 else list(scope.floats)
        return self.rng.choice(pool)

    def binary(self, scope: _Scope) -> None:
        left = self.any_float(scope)
        partners = [
            name
            for name, s in scope.floats.items()
            if _broadcast(scope.floats[left], s) is not None
        ]
        right = self.rng.choice(partners)
        shape = _broadcast(scope.floats[left], scope.floats[right])
        op = self.rng.choice(BINARY)
        if op == "Mul":  # |tanh| < 1: products cannot overflow however deep the loops
            right = self.emit(scope, "Tanh", [right], shape=scope.floats[right])
        self.emit(scope, op, [left, right], shape=shape)

    def unary(self, scope: _Scope) -> None:
        value = self.any_float(scope)
        self.emit(scope, self.rng.choice(UNARY), [value], shape=scope.floats[value])

    def concat(self, scope: _Scope) -> None:
        vectors = [name for name, s in scope.floats.items() if len(s) == 1]
        left = self.rng.choice(vectors)
        right = self.rng.choice([name for name in vectors if None not in scope.floats[name]])
        dims = scope.floats[left][0], scope.floats[right][0]
        shape = (None,) if None in dims else (dims[0] + dims[1],)
        self.emit(scope, "Concat", [left, right], shape=shape, axis=0)

    def outputs(self, scope: _Scope, op: str, inputs: list[str], shapes: list[Shape], **attrs):
        """Append a node with float outputs of `shapes` (control flow), then, for each kind in
        `extra` (an attribute taken out here), an int64 ("i") or bool ("b") scalar output."""
        extra = attrs.pop("extra", [])
        floats = [self.name() for _ in shapes]
        scalars = [self.name() for _ in extra]
        outs = floats + scalars
        scope.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op + "_"), **attrs))
        scope.local.update(outs)
        scope.floats.update(zip(floats, shapes))
        for name, kind in zip(scalars, extra):
            (scope.ints if kind == "i" else scope.bools).append(name)
        return outs

    def scalar_result(self, branch: _Scope, kind: str) -> onnx.ValueInfoProto:
        """An If branch output: an int64 scalar from the branch's trip counts or a constant in
        [0, 3], or a bool scalar (a condition); computed in the branch."""
        if kind == "i":
            if self.rng.random() < 0.5:
                value = self.emit(branch, "Identity", [self.rng.choice(branch.ints)], "i")
            else:
                value = self.constant(branch, np.array(self.rng.randint(0, 3), np.int64), "i")
            return _typed(value, TensorProto.INT64, ())
        value = self.emit(branch, "Identity", [self.condition(branch)], "b")
        return _typed(value, TensorProto.BOOL, ())


def _finish(scope: _Scope, generator: _Generator, wanted: list[tuple[Shape, bool]]) -> list[str]:
    """Output names for a body: per (shape, must be local) a value of that shape, wrapped in an
    Identity when it is not computed in this scope and must be."""
    names = []
    for shape, must_be_local in wanted:
        value = generator.value_of(scope, shape)
        if must_be_local and value not in scope.local:
            value = generator.emit(scope, "Identity", [value], shape=shape)
        names.append(value)
    return names


class _ControlFlowGenerator(_Generator):
    """Adds If, Loop and Scan nodes, each with a body drawn by the same generator."""

    def body_graph(self, body: _Scope, inputs: list, outputs: list) -> onnx.GraphProto:
        return helper.make_graph(body.nodes, self.name("body"), inputs, outputs)

    def make_if(self, scope: _Scope) -> None:
        condition = self.condition(scope)
        pairs = []
        for _ in range(self.rng.randint(1, 2)):
            shape = self.rng.choice([(), *RANK1, (2, 2)])
            other = self.rng.choice(RANK1) if len(shape) == 1 and self.rng.random() < 0.5 else shape
            pairs.append((shape, other))
        extra = [kind for kind in "ib" if self.rng.random() < 0.3]  # trip counts, conditions
        branches, parts = {}, []
        for label, shapes in (
            ("then_branch", [p[0] for p in pairs]),
            ("else_branch", [p[1] for p in pairs]),
        ):
            branch = scope.child()
            self.fill(branch, self.rng.randint(0, 3))
            names = _finish(branch, self, [(s, True) for s in shapes])
            typed = [_typed(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)]
            typed += [self.scalar_result(branch, kind) for kind in extra]
            branches[label] = self.body_graph(branch, [], typed)
            parts.append(f"{label.split('_')[0]}: {' '.join(branch.parts)}".rstrip(": "))
        shapes = [a if a == b else (None,) for a, b in pairs]
        self.outputs(scope, "If", [condition], shapes, extra=extra, **branches)
        same = "same" if all(a == b for a, b in pairs) else "differing"
        scope.parts.append(
            f"If({same} shapes{', ' + ''.join(extra) if extra else ''})[{'; '.join(parts)}]"
        )

    def trip_and_condition(self, scope: _Scope) -> tuple[str, str, str]:
        """The Loop's trip count and condition inputs ('' when absent) and their description."""
        trip_mode = self.rng.choice(["constant", "runtime", "absent"])
        modes = ["constant", "runtime"] + (["absent"] if trip_mode != "absent" else [])
        condition_mode = self.rng.choice(modes)
        trip = {
            "constant": lambda: self.constant(scope, np.array(self.rng.randint(0, 3)), "i"),
            "runtime": lambda: self.rng.choice(scope.ints),
            "absent": lambda: "",
        }[trip_mode]()
        condition = {
            "constant": lambda: self.constant(scope, np.array(self.rng.random() < 0.9), "b"),
            "runtime": lambda: self.condition(scope),
            "absent": lambda: "",
        }[condition_mode]()
        return trip, condition, f"trip={trip_mode},cond={condition_mode}"

    def loop_condition(self, body: _Scope, iteration: str, condition_in: str, bounded: bool):
        """The body's condition output; `bounded` adds `i < K` (a Loop with no trip count)."""
        choice = self.rng.choice(["passthrough", "counter", "data"])
        if choice == "passthrough" and not bounded:
            return condition_in
        limit = self.constant(body, np.array(self.rng.randint(1, 3), np.int64), "i")
        counter = self.emit(body, "Less", [iteration, limit], "b")
        if choice == "data":
            total = self.emit(body, "ReduceSum", [self.any_float(body)], keepdims=0)
            threshold = self.constant(body, np.float32(self.rng.uniform(-1, 1)))
            data = self.emit(body, "Greater", [total, threshold], "b")
            if self.rng.random() < 0.5:  # or a condition already there (an If's, an outer one)
                data = self.emit(body, "Identity", [self.rng.choice(body.bools)], "b")
            return self.emit(body, "And", [counter, data], "b") if bounded else data
        return counter

    def make_loop(self, scope: _Scope) -> None:
        trip, condition, modes = self.trip_and_condition(scope)
        kinds = [(), *RANK1, (2, 2), (None,)]
        carried = [self.rng.choice(kinds) for _ in range(self.rng.randint(0, 2))]
        stacked = [self.rng.choice([(), (2,), (2, 2)]) for _ in range(self.rng.randint(0, 2))]
        carried = carried or ([(2,)] if not stacked else [])
        initial = [
            self.value_of(scope, self.rng.choice(RANK1) if shape == (None,) else shape)
            for shape in carried
        ]
        body = scope.child()
        iteration, condition_in = self.name("i"), self.name("cond")
        carried_in = [self.name("c") for _ in carried]
        body.ints.append(iteration)
        body.floats.update(zip(carried_in, carried))
        body.local.update([iteration, condition_in, *carried_in])
        self.emit(body, "Cast", [iteration], to=TensorProto.FLOAT)
        self.fill(body, self.rng.randint(1, 4))
        condition_out = self.loop_condition(body, iteration, condition_in, bounded=not trip)
        outs = _finish(body, self, [(s, True) for s in carried + stacked])
        inputs = [
            _typed(iteration, TensorProto.INT64, ()),
            _typed(condition_in, TensorProto.BOOL, ()),
            *[_typed(n, TensorProto.FLOAT, s) for n, s in zip(carried_in, carried)],
        ]
        results = [_typed(condition_out, TensorProto.BOOL, ())]
        results += [_typed(n, TensorProto.FLOAT, s) for n, s in zip(outs, carried + stacked)]
        graph = self.body_graph(body, inputs, results)
        shapes = carried + [(None, *s) for s in stacked]
        self.outputs(scope, "Loop", [trip, condition, *initial], shapes, body=graph)
        described = f"{modes},carried={len(carried)},scan={len(stacked)}"
        scope.parts.append(f"Loop({described})[{' '.join(body.parts)}]")

    def scan_sources(self, scope: _Scope) -> tuple[list[str], list[Shape], int | None]:
        """Scan inputs (all of one length), their element shapes and that length."""
        if self.rng.random() < 0.6:
            sources = [SEQUENCE]
            if self.rng.random() < 0.5:
                sources.append(self.emit(scope, "Neg", [SEQUENCE], shape=(None, 2)))
            return sources, [(2,)] * len(sources), None
        element = self.rng.choice([(), (2,)])
        axes = self.constant(scope, np.array([0], np.int64), "axes")
        rows = [
            self.emit(
                scope, "Unsqueeze", [self.value_of(scope, element), axes], shape=(1, *element)
            )
            for _ in range(2)
        ]
        return [self.emit(scope, "Concat", rows, shape=(2, *element), axis=0)], [element], 2

    def make_scan(self, scope: _Scope) -> None:
        sources, elements, length = self.scan_sources(scope)
        states = [self.rng.choice([(), *RANK1, (2, 2)]) for _ in range(self.rng.randint(0, 2))]
        stacked = [self.rng.choice([(), (2,)]) for _ in range(self.rng.randint(0, 2))]
        states = states or ([(2,)] if not stacked else [])
        initial = [self.value_of(scope, shape) for shape in states]
        body = scope.child()
        states_in = [self.name("st") for _ in states]
        elements_in = [self.name("x") for _ in elements]
        body.floats.update(zip(states_in + elements_in, states + elements))
        body.local.update(states_in + elements_in)
        self.fill(body, self.rng.randint(1, 4))
        outs = _finish(body, self, [(s, True) for s in states + stacked])
        inputs = [
            _typed(n, TensorProto.FLOAT, s)
            for n, s in zip(states_in + elements_in, states + elements)
        ]
        results = [_typed(n, TensorProto.FLOAT, s) for n, s in zip(outs, states + stacked)]
        axes = [self.rng.choice([0, len(s)]) for s in stacked]
        shapes = states + [(*s[:axis], length, *s[axis:]) for s, axis in zip(stacked, axes)]
        attributes = {
            "scan_input_directions": [self.rng.randint(0, 1) for _ in sources],
            "scan_output_directions": [self.rng.randint(0, 1) for _ in stacked],
            "scan_output_axes": axes,
        }
        self.outputs(
            scope,
            "Scan",
            [*initial, *sources],
            shapes,
            body=self.body_graph(body, inputs, results),
            num_scan_inputs=len(sources),
            **{key: value for key, value in attributes.items() if value},
        )
        source = "X" if length is None else "local"
        described = f"{source},states={len(states)},scan={len(stacked)}"
        scope.parts.append(f"Scan({described})[{' '.join(body.parts)}]")


def random_model(seed: int, runs: int = 2) -> RandomModel:
    """The model drawn from `seed`, with `runs` feeds drawn from it too."""
    generator = _ControlFlowGenerator(seed)
    rng = generator.rng
    main = _Scope({**FLOAT_INPUTS, SEQUENCE: (None, 2)}, [TRIPS], [FLAG], depth=0)
    generator.fill(main, rng.randint(0, 2))
    before = set(main.floats)
    rng.choice([generator.make_loop, generator.make_loop, generator.make_scan, generator.make_if])(
        main
    )
    wanted = [name for name in main.floats if name not in before]
    generator.fill(main, rng.randint(0, 2))
    extra = [name for name in main.local if name in main.floats and name not in wanted]
    wanted += sorted(rng.sample(extra, min(len(extra), rng.randint(0, 2))))
    inputs = [_typed(name, TensorProto.FLOAT, shape) for name, shape in FLOAT_INPUTS.items()]
    inputs += [
        _typed(SEQUENCE, TensorProto.FLOAT, (None, 2)),
        _typed(TRIPS, TensorProto.INT64, ()),
        _typed(FLAG, TensorProto.BOOL, ()),
    ]
    outputs = [_typed(name, TensorProto.FLOAT, main.floats[name]) for name in wanted]
    graph = helper.make_graph(main.nodes, f"random_{seed}", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    feeds = np.random.default_rng(seed)
    return RandomModel(seed, model, [_feeds(feeds) for _ in range(runs)], " ".join(main.parts))


def _feeds(rng: np.random.Generator) -> dict[str, np.ndarray]:
    feeds = {
        name: rng.uniform(-1, 1, shape).astype(np.float32) for name, shape in FLOAT_INPUTS.items()
    }
    feeds[SEQUENCE] = rng.uniform(-1, 1, (int(rng.integers(1, 4)), 2)).astype(np.float32)
    feeds[TRIPS] = np.array(rng.integers(0, 4), np.int64)
    feeds[FLAG] = np.array(rng.random() < 0.7)
    return feeds
