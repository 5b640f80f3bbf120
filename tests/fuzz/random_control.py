"""The control-flow half of the random model generator: If, Loop and Scan nodes with bodies.

Loops get trip counts constant (0 to 3), computed at run time, the rows of the sequence input
(`x_t = Gather(X, i)`) or absent, and conditions constant (false at entry too), computed or
absent; bodies stop early on `i < K` or on data; carried values keep their shape, change it
(any vector), or only grow by Concat (a vector along axis 0, a [2, n] matrix along axis 1: what
the accumulator pass rewrites). Every loop is bounded: a Loop without a trip count stops on
`i < K` in its body. Values stay finite: products take a tanh of one factor.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.fuzz.random_graphs import RANK1, Generator, Scope, Shape, finish, typed

APPEND = "append"  # a carried-value kind: the body only extends it by Concat


class ControlFlowGenerator(Generator):
    """Adds If, Loop and Scan nodes, each with a body drawn by the same generator. `sequence`
    is the float [T, 2] input loops may run over (None: none may)."""

    def __init__(self, seed: int, opset: int = 17, sequence: str | None = None) -> None:
        super().__init__(seed, opset)
        self.sequence = sequence

    def control_flow(self, scope: Scope) -> None:
        kinds = [self.make_if, self.make_loop] + ([self.make_scan] if self.opset >= 9 else [])
        self.rng.choice(kinds)(scope)

    def body_graph(self, body: Scope, inputs: list, outputs: list) -> onnx.GraphProto:
        return helper.make_graph(body.nodes, self.name("body"), inputs, outputs)

    def outputs(self, scope: Scope, op: str, inputs: list[str], shapes: list[Shape], **attrs):
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

    # -- If ------------------------------------------------------------------------------------
    def scalar_result(self, branch: Scope, kind: str) -> onnx.ValueInfoProto:
        """An If branch output: an int64 scalar from the branch's trip counts or a constant in
        [0, 3], or a bool scalar (a condition); computed in the branch."""
        if kind == "i":
            if self.rng.random() < 0.5:
                value = self.emit(branch, "Identity", [self.rng.choice(branch.ints)], "i")
            else:
                value = self.constant(branch, np.array(self.rng.randint(0, 3), np.int64), "i")
            return typed(value, TensorProto.INT64, ())
        value = self.emit(branch, "Identity", [self.condition(branch)], "b")
        return typed(value, TensorProto.BOOL, ())

    def make_if(self, scope: Scope) -> None:
        condition = self.condition(scope)
        pairs = []
        for _ in range(self.rng.randint(1, 2)):
            shape = self.rng.choice([(), *RANK1, (2, 2)])
            differ = len(shape) == 1 and self.rng.random() < 0.5 and self.opset >= 11  # If-11
            other = self.rng.choice(RANK1) if differ else shape
            pairs.append((shape, other))
        extra = [kind for kind in "ib" if self.rng.random() < 0.3]  # trip counts, conditions
        branches, parts = {}, []
        for label, shapes in (
            ("then_branch", [p[0] for p in pairs]),
            ("else_branch", [p[1] for p in pairs]),
        ):
            branch = scope.child()
            self.fill(branch, self.rng.randint(0, 3))
            names = finish(branch, self, [(s, True) for s in shapes])
            results = [typed(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)]
            results += [self.scalar_result(branch, kind) for kind in extra]
            branches[label] = self.body_graph(branch, [], results)
            parts.append(f"{label.split('_')[0]}: {' '.join(branch.parts)}".rstrip(": "))
        shapes = [a if a == b else (None,) for a, b in pairs]
        self.outputs(scope, "If", [condition], shapes, extra=extra, **branches)
        same = "same" if all(a == b for a, b in pairs) else "differing"
        scope.parts.append(
            f"If({same} shapes{', ' + ''.join(extra) if extra else ''})[{'; '.join(parts)}]"
        )

    # -- Loop ----------------------------------------------------------------------------------
    def trip_and_condition(self, scope: Scope, streamed: bool) -> tuple[str, str, str, str]:
        """The Loop's trip count and condition inputs ('' when absent) and how each was drawn;
        `streamed`: over the rows of the sequence, with no condition or a constant true one."""
        trip_modes = ["constant", "runtime", "absent"] + (["rows"] if self.sequence else [])
        trip_mode = "rows" if streamed else self.rng.choice(trip_modes)
        modes = ["constant", "runtime"] + (["absent"] if trip_mode != "absent" else [])
        condition_mode = self.rng.choice(["absent", "constant"] if streamed else modes)
        trip = {
            "constant": lambda: self.constant(scope, np.array(self.rng.randint(0, 3)), "i"),
            "runtime": lambda: self.rng.choice(scope.ints),
            "rows": lambda: self.rows(scope),
            "absent": lambda: "",
        }[trip_mode]()
        keep_going = 1.0 if streamed else 0.75  # false at entry a quarter of the time
        condition = {
            "constant": lambda: self.constant(scope, np.array(self.rng.random() < keep_going), "b"),
            "runtime": lambda: self.condition(scope),
            "absent": lambda: "",
        }[condition_mode]()
        return trip, condition, trip_mode, condition_mode

    def rows(self, scope: Scope) -> str:
        """len(sequence), an int64 scalar computed at run time."""
        shape = self.emit(scope, "Shape", [self.sequence], "shape")
        first = self.constant(scope, np.array(0, np.int64), "index")
        return self.emit(scope, "Gather", [shape, first], "count", axis=0)

    def loop_condition(self, body: Scope, iteration: str, condition_in: str, bounded: bool):
        """The body's condition output; `bounded` adds `i < K` (a Loop with no trip count)."""
        choice = self.rng.choice(["passthrough", "counter", "data"])
        if choice == "passthrough" and not bounded:
            return condition_in
        limit = self.rng.randint(1, 3)
        if self.opset >= 9:
            counter_limit = self.constant(body, np.array(limit, np.int64), "i")
            counter = self.emit(body, "Less", [iteration, counter_limit], "b")
        else:  # Less-7 compares floats only
            number = self.emit(body, "Cast", [iteration], "index", to=TensorProto.FLOAT)
            counter_limit = self.constant(body, np.array(limit, np.float32), "index")
            counter = self.emit(body, "Less", [number, counter_limit], "b")
        if choice == "data":
            total = self.emit(body, "ReduceSum", [self.any_float(body)], keepdims=0)
            threshold = self.constant(body, np.float32(self.rng.uniform(-1, 1)))
            data = self.emit(body, "Greater", [total, threshold], "b")
            if self.rng.random() < 0.5:  # or a condition already there (an If's, an outer one)
                data = self.emit(body, "Identity", [self.rng.choice(body.bools)], "b")
            return self.emit(body, "And", [counter, data], "b") if bounded else data
        return counter

    def carried_kinds(self) -> list:
        kinds = [(), *RANK1, (2, 2), (None,), APPEND, APPEND]
        return [self.rng.choice(kinds) for _ in range(self.rng.randint(0, 2))]

    def make_loop(self, scope: Scope, streamed: bool = False) -> None:
        """A Loop; `streamed`: over the rows of the sequence, reading neither the iteration
        number nor anything else of the sequence in its body (chunks of it give the same)."""
        trip, condition, trip_mode, condition_mode = self.trip_and_condition(scope, streamed)
        kinds = self.carried_kinds()
        stacked = [self.rng.choice([(), (2,), (2, 2)]) for _ in range(self.rng.randint(0, 2))]
        kinds = kinds or ([(2,)] if not stacked or self.opset < 11 else [])  # Loop-1: one at least
        appended = [_Append(self.rng) if kind == APPEND else None for kind in kinds]
        carried = [a.shape if a else kind for a, kind in zip(appended, kinds)]
        initial = [self.initial_value(scope, a, kind) for a, kind in zip(appended, kinds)]
        body = scope.child()
        iteration, condition_in = self.name("i"), self.name("cond")
        carried_in = [self.name("c") for _ in carried]
        body.floats.update(
            (name, shape)
            for name, shape, a in zip(carried_in, carried, appended)
            if not (a and a.exclusive)
        )
        body.local.update([iteration, condition_in, *carried_in])
        sequence = self.sequence
        if streamed:
            self.sequence = None  # nothing in the body reads the sequence but x_t below
        else:
            body.ints.append(iteration)
            self.emit(body, "Cast", [iteration], to=TensorProto.FLOAT)
        if trip_mode == "rows":
            self.emit(body, "Gather", [sequence, iteration], shape=(2,), axis=0)
        self.fill(body, self.rng.randint(1, 4))
        if streamed:
            condition_out = self.emit(body, "Identity", [condition_in], "b")
        else:
            condition_out = self.loop_condition(body, iteration, condition_in, bounded=not trip)
        plain = [shape for shape, a in zip(carried, appended) if not a] + stacked
        made = iter(finish(body, self, [(shape, True) for shape in plain]))
        grown = [a.grown(self, body, name) if a else None for a, name in zip(appended, carried_in)]
        outs = [value or next(made) for value in grown] + list(made)
        self.sequence = sequence
        inputs = [
            typed(iteration, TensorProto.INT64, ()),
            typed(condition_in, TensorProto.BOOL, ()),
            *[typed(n, TensorProto.FLOAT, s) for n, s in zip(carried_in, carried)],
        ]
        results = [typed(condition_out, TensorProto.BOOL, ())]
        results += [typed(n, TensorProto.FLOAT, s) for n, s in zip(outs, carried + stacked)]
        graph = self.body_graph(body, inputs, results)
        shapes = carried + [(None, *s) for s in stacked]
        self.outputs(scope, "Loop", [trip, condition, *initial], shapes, body=graph)
        described = (
            f"trip={trip_mode},cond={condition_mode},carried={len(carried)},"
            f"appended={sum(a is not None for a in appended)},"
            f"scan={len(stacked)}"
        )
        scope.parts.append(f"Loop({described})[{' '.join(body.parts)}]")

    def initial_value(self, scope: Scope, append: _Append | None, kind: Shape) -> str:
        if append:
            return self.value_of(scope, append.initial)
        return self.value_of(scope, self.rng.choice(RANK1) if kind == (None,) else kind)

    # -- Scan ----------------------------------------------------------------------------------
    def scan_sources(self, scope: Scope, streamed: bool) -> tuple[list[str], list[Shape], int]:
        """Scan inputs (all of one length), their element shapes and that length (None: the
        sequence's, only known at run time)."""
        if self.sequence and (streamed or self.rng.random() < 0.6):
            sources = [self.sequence]
            if self.rng.random() < 0.5:
                sources.append(self.emit(scope, "Neg", [self.sequence], "sequence"))
            return sources, [(2,)] * len(sources), None
        element = self.rng.choice([(), (2,)])
        rows = [self.unsqueezed(scope, self.value_of(scope, element), element) for _ in range(2)]
        return [self.emit(scope, "Concat", rows, shape=(2, *element), axis=0)], [element], 2

    def make_scan(self, scope: Scope, streamed: bool = False) -> None:
        """A Scan-9+; `streamed`: forward over the sequence, which its body does not read."""
        sources, elements, length = self.scan_sources(scope, streamed)
        states = [self.rng.choice([(), *RANK1, (2, 2)]) for _ in range(self.rng.randint(0, 2))]
        stacked = [self.rng.choice([(), (2,)]) for _ in range(self.rng.randint(0, 2))]
        states = states or ([(2,)] if not stacked else [])
        initial = [self.value_of(scope, shape) for shape in states]
        sequence, self.sequence = self.sequence, None if streamed else self.sequence
        body, states_in, elements_in = self.scan_body(scope, states, elements)
        outs = finish(body, self, [(s, True) for s in states + stacked])
        self.sequence = sequence
        inputs = [
            typed(n, TensorProto.FLOAT, s)
            for n, s in zip(states_in + elements_in, states + elements)
        ]
        results = [typed(n, TensorProto.FLOAT, s) for n, s in zip(outs, states + stacked)]
        axes = [self.rng.choice([0, len(s)]) for s in stacked]
        shapes = states + [(*s[:axis], length, *s[axis:]) for s, axis in zip(stacked, axes)]
        draw = 0 if streamed else 1
        attributes = {
            "scan_input_directions": [self.rng.randint(0, draw) for _ in sources],
            "scan_output_directions": [self.rng.randint(0, draw) for _ in stacked],
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

    def scan_body(self, scope: Scope, states: list[Shape], elements: list[Shape]):
        """A Scan body over `states` and `elements`, filled: (scope, state names, element
        names)."""
        body = scope.child()
        states_in = [self.name("st") for _ in states]
        elements_in = [self.name("x") for _ in elements]
        body.floats.update(zip(states_in + elements_in, states + elements))
        body.local.update(states_in + elements_in)
        self.fill(body, self.rng.randint(1, 4))
        return body, states_in, elements_in


class _Append:
    """A carried value the body only extends: a vector by [1] or [2] along axis 0, or a [2, n]
    matrix by [2, 1] along axis 1; `exclusive`: nothing else in the body reads it."""

    def __init__(self, rng) -> None:
        self.axis = rng.choice([0, 0, 1])
        self.part = rng.choice([(1,), (1,), (2,)]) if self.axis == 0 else (2, 1)
        self.shape = (None,) if self.axis == 0 else (2, None)
        self.initial = rng.choice(RANK1) if self.axis == 0 else (2, rng.randint(1, 2))
        self.exclusive = rng.random() < 0.7

    def grown(self, generator: ControlFlowGenerator, body: Scope, carried_in: str) -> str:
        part = generator.value_of(body, self.part)
        return generator.emit(body, "Concat", [carried_in, part], shape=self.shape, axis=self.axis)
