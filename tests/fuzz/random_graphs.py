"""The plain-op half of the random model generator: scopes, values and elementwise ops.

`Generator` draws every choice from one `random.Random`; `tests/fuzz/random_control.py` adds
If, Loop and Scan nodes on top of it and `tests/fuzz/random_models.py` puts whole models
together. `opset` is 17, or 8 for models with a Scan-8 (no int64 comparisons, Unsqueeze's axes
an attribute, no Scan-9 inside).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper

Shape = tuple  # of dims: int, or None where the length is only known at run time

BINARY = ["Add", "Sub", "Mul", "Max", "Min"]
# Abs: OpenVINO's AbsSinking (2026.4.1) rewrote a rank-1 Concat read by an Abs and by other ops
# into a Concat of Abs for all of them (ReduceMean(Concat(s, s)) flipped sign; issue 20); the
# converter guards it (pass copy-concats-before-abs).
UNARY = ["Neg", "Tanh", "Sigmoid", "Abs"]
REDUCTIONS = ["ReduceSum", "ReduceSum", "ReduceMean"]
RANK1 = [(1,), (2,), (4,)]


@dataclass
class Scope:
    """The values a graph under construction can read: its own and its enclosing scopes'."""

    floats: dict[str, Shape]
    ints: list[str]
    bools: list[str]
    depth: int
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    local: set[str] = field(default_factory=set)
    parts: list[str] = field(default_factory=list)  # descriptions of its control-flow nodes

    def child(self) -> Scope:
        return Scope(dict(self.floats), list(self.ints), list(self.bools), self.depth + 1)


def typed(name: str, elem_type: int, shape: Shape | None) -> onnx.ValueInfoProto:
    """A tensor value info (`None` dims are dynamic)."""
    return helper.make_tensor_value_info(name, elem_type, None if shape is None else list(shape))


def broadcast(left: Shape, right: Shape) -> Shape | None:
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


class Generator:
    """Draws one graph's plain ops; every choice comes from `self.rng`."""

    def __init__(self, seed: int, opset: int = 17) -> None:
        self.rng = random.Random(seed)
        self.max_depth = self.rng.randint(1, 3)
        self.count = 0
        self.opset = opset

    # -- values --------------------------------------------------------------------------------
    def name(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, scope: Scope, op: str, inputs: list[str], kind: str = "f", shape=(), **attrs):
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

    def constant(self, scope: Scope, array: np.ndarray, kind: str = "f") -> str:
        """A Constant of `array` (before opset 9, of floats only: others through a Cast)."""
        if self.opset < 9 and array.dtype != np.float32:
            number = self.constant(scope, array.astype(np.float32), "number")
            to = helper.np_dtype_to_tensor_dtype(array.dtype)
            return self.emit(scope, "Cast", [number], kind, tuple(array.shape), to=to)
        tensor = numpy_helper.from_array(array, self.name("k"))
        return self.emit(scope, "Constant", [], kind, tuple(array.shape), value=tensor)

    def value_of(self, scope: Scope, shape: Shape) -> str:
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

    def condition(self, scope: Scope) -> str:
        """A bool scalar: a constant, an existing one or a comparison of two float scalars."""
        draw = self.rng.random()
        if draw < 0.15:  # a constant (the frontend may fold an If on it)
            return self.constant(scope, np.array(self.rng.random() < 0.5), "b")
        if scope.bools and draw < 0.55:
            return self.rng.choice(scope.bools)
        scalars = [name for name, s in scope.floats.items() if s == ()]
        left, right = self.rng.choice(scalars), self.rng.choice(scalars)
        return self.emit(scope, self.rng.choice(["Less", "Greater"]), [left, right], "b")

    def unsqueezed(self, scope: Scope, value: str, shape: Shape) -> str:
        """`value` with a new axis 0 (Unsqueeze's axes an input from opset 13, else attribute)."""
        if self.opset >= 13:
            axes = self.constant(scope, np.array([0], np.int64), "axes")
            return self.emit(scope, "Unsqueeze", [value, axes], shape=(1, *shape))
        return self.emit(scope, "Unsqueeze", [value], shape=(1, *shape), axes=[0])

    # -- plain ops -----------------------------------------------------------------------------
    def fill(self, scope: Scope, count: int) -> None:
        for _ in range(count):
            draw = self.rng.random()
            if draw < 0.3 and scope.depth < self.max_depth:
                self.control_flow(scope)
            elif draw < 0.6:
                self.binary(scope)
            elif draw < 0.75:
                self.unary(scope)
            elif draw < 0.83:
                value = self.any_float(scope)
                self.emit(scope, self.rng.choice(REDUCTIONS), [value], keepdims=0)
            elif draw < 0.9:
                self.matmul(scope)
            else:
                self.concat(scope)

    def control_flow(self, scope: Scope) -> None:
        """A control-flow node (random_control.py); plain graphs have none."""
        self.binary(scope)

    def any_float(self, scope: Scope) -> str:
        local = [name for name in scope.floats if name in scope.local]
        pool = local if local and self.rng.random() < 0.6 else list(scope.floats)
        return self.rng.choice(pool)

    def binary(self, scope: Scope) -> None:
        left = self.any_float(scope)
        partners = [
            name for name, s in scope.floats.items() if broadcast(scope.floats[left], s) is not None
        ]
        right = self.rng.choice(partners)
        shape = broadcast(scope.floats[left], scope.floats[right])
        op = self.rng.choice(BINARY)
        if op == "Mul":  # |tanh| < 1: products cannot overflow however deep the loops
            right = self.emit(scope, "Tanh", [right], shape=scope.floats[right])
        self.emit(scope, op, [left, right], shape=shape)

    def unary(self, scope: Scope) -> None:
        value = self.any_float(scope)
        self.emit(scope, self.rng.choice(UNARY), [value], shape=scope.floats[value])

    def matmul(self, scope: Scope) -> None:
        """x @ tanh(W), x of shape [2] or [2, 2], W [2, 2] (the work sliced hoisting moves)."""
        left = self.value_of(scope, self.rng.choice([(2,), (2, 2)]))
        weights = self.emit(scope, "Tanh", [self.value_of(scope, (2, 2))], shape=(2, 2))
        self.emit(scope, "MatMul", [left, weights], shape=scope.floats[left])

    def concat(self, scope: Scope) -> None:
        vectors = [name for name, s in scope.floats.items() if len(s) == 1]
        left = self.rng.choice(vectors)
        right = self.rng.choice([name for name in vectors if None not in scope.floats[name]])
        dims = scope.floats[left][0], scope.floats[right][0]
        shape = (None,) if None in dims else (dims[0] + dims[1],)
        self.emit(scope, "Concat", [left, right], shape=shape, axis=0)


def finish(scope: Scope, generator: Generator, wanted: list[tuple[Shape, bool]]) -> list[str]:
    """Output names for a body: per (shape, must be local) a value of that shape, wrapped in an
    Identity when it is not computed in this scope and must be."""
    names = []
    for shape, must_be_local in wanted:
        value = generator.value_of(scope, shape)
        if must_be_local and value not in scope.local:
            value = generator.emit(scope, "Identity", [value], shape=shape)
        names.append(value)
    return names
