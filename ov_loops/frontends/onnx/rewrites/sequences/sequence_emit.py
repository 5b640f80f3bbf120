"""Writing the ONNX tensor nodes that stand for sequence ops: fresh names, constants and the few
ops whose form changed between opsets (Reshape's allowzero, ReduceSum's axes)."""

from __future__ import annotations

import numpy as np

from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.scopes import fresh_name

INT64_MAX = 2**63 - 1


class Emit:
    """Appends nodes to `nodes`, each output a fresh name (from `taken`) based on `hint`."""

    def __init__(self, nodes: list[schema.NodeProto], taken: set[str], opset: int, hint: str):
        self.nodes = nodes
        self.taken = taken
        self.opset = opset
        self.hint = hint

    def name(self, what: str) -> str:
        return fresh_name(f"{self.hint}.{what}", self.taken)

    def op(self, op_type: str, inputs: list[str], out: str | None = None, **attrs) -> str:
        """One node of `op_type`; its (single) output name."""
        out = out or self.name(op_type.lower())
        self.nodes.append(helpers.make_node(op_type, inputs, [out], **attrs))
        return out

    def const(self, value, dtype=np.int64) -> str:
        array = np.asarray(value, dtype)
        return self.op("Constant", [], value=helpers.from_array(array))

    def empty(self, elem_type: int) -> str:
        """A 1-D tensor of no elements of `elem_type`."""
        tensor = helpers.make_tensor("", elem_type, [0], [])
        return self.op("Constant", [], value=tensor)

    # -- shapes and vectors --------------------------------------------------------------------
    def flat(self, x: str) -> str:
        return self.op("Reshape", [x, self.const([-1])])

    def vector(self, scalar: str) -> str:
        """The scalar as a 1-D tensor of one element."""
        return self.op("Reshape", [scalar, self.const([1])])

    def size(self, x: str) -> str:
        """Number of elements of x, 1-D of one element."""
        return self.vector(self.op("Size", [x]))

    def rank(self, x: str) -> str:
        """Rank of x, 1-D of one element."""
        return self.op("Shape", [self.op("Shape", [x])])

    def concat(self, parts: list[str], axis: int = 0) -> str:
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, axis=axis)

    def slice(self, x: str, start: str, end: str | None = None) -> str:
        """x[start:end] along axis 0 (start and end 1-D of one element; end None: to the end)."""
        return self.op("Slice", [x, start, end or self.const([INT64_MAX]), self.const([0])])

    def take(self, x: str, start: str, end: str | None = None) -> str:
        """x[start:end] along axis 0 (start and end 1-D of one element; end None: to the end),
        as a Gather of a Range: OpenVINO's CPU plugin bounds a Slice of a loop-carried vector
        by the length it entered the loop with, and fails when it grows ("Can not clone with
        new dims"); a Range's length it does not bound."""
        end = end or self.size(x)
        steps = self.op("Range", [self.scalar(start), self.scalar(end), self.const(1)])
        return self.op("Gather", [x, steps], axis=0)

    def reshape(self, x: str, shape: str) -> str:
        """Reshape to `shape` exactly (a 0 in it is a zero-length axis where the opset allows)."""
        zero = {"allowzero": 1} if self.opset >= 14 else {}
        return self.op("Reshape", [x, shape], **zero)

    def total(self, x: str) -> str:
        """Sum of all elements, a scalar (0 when x is empty)."""
        return self.op("ReduceSum", [x], keepdims=0)

    def product(self, x: str) -> str:
        """Product of all elements, a scalar (1 when x is empty)."""
        return self.op("ReduceProd", [x], keepdims=0)

    def count_along_last(self, x: str) -> str:
        """Number of true values of a 2-D bool x in each row, 1-D int64."""
        ints = self.op("Cast", [x], to=schema.TensorProto.INT64)
        if self.opset >= 13:
            return self.op("ReduceSum", [ints, self.const([1])], keepdims=0)
        return self.op("ReduceSum", [ints], axes=[1], keepdims=0)

    def starts(self, counts: str) -> str:
        """[0, c0, c0 + c1, ...]: where each piece of `counts` starts, and the total last."""
        return self.concat([self.const([0]), self.op("CumSum", [counts, self.const(0)])])

    def at(self, vector: str, index: str) -> str:
        """vector[index] for a 1-D index of one element: 1-D of one element."""
        return self.op("Gather", [vector, index], axis=0)

    def plus(self, x: str, value: int) -> str:
        return self.op("Add", [x, self.const(value)])

    def arange(self, count: str) -> str:
        """[0, 1, ..., count - 1] for a scalar count."""
        return self.op("Range", [self.const(0), count, self.const(1)])

    def scalar(self, vector: str) -> str:
        """The one element of a 1-D tensor, as a scalar."""
        return self.op("Reshape", [vector, self.const([], np.int64)])

    def repeat(self, row: str, count: str) -> str:
        """A 2-D tensor of `count` (1-D of one element) copies of the 1-D `row`."""
        shape = self.concat([count, self.op("Shape", [row])])
        return self.op("Expand", [self.unsqueeze(row, [0]), shape])

    def unsqueeze(self, x: str, axes: list[int]) -> str:
        """x with length-1 axes inserted at `axes` (no Reshape with -1: OpenVINO's constant
        folding divides by zero on an empty x)."""
        if self.opset >= 13:
            return self.op("Unsqueeze", [x, self.const(axes)])
        return self.op("Unsqueeze", [x], axes=axes)
