"""Pass: a carried sum of per-iteration outer products becomes one product after the loop."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract.ports import UNNUMBERED, renumbered
from ov_loops.contract.spec import ConcatenatedOutput
from ov_loops.loopir.loop import LoopIR, LoopResult
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.shared_edits import (
    live_readers,
    split_last_values,
    used_elsewhere,
    without_merged,
)
from ov_loops.loopir.steps import AfterLoop
from ov_loops.record import Record


class _Sum(Record):
    """A carried value (merged input `merged`, body Result `result`) that each iteration adds
    MatMul(a, b, transpose_a) to: a [k, m], b [k, n]."""

    __slots__ = ("merged", "result", "a", "b")

    def __init__(self, merged: int, result: int, a: ov.Output, b: ov.Output) -> None:
        self.merged = merged
        self.result = result
        self.a = a
        self.b = b

    @property
    def rows(self) -> int:
        return self.a.get_partial_shape()[0].get_length()

    def part(self) -> ov.Output:
        """The Loop's per-iteration part: a and b side by side, [k, m + n] ([1, k, m + n]
        when k > 1: Loop-5 stacks parts of one row, passes/accumulators.py)."""
        joined = ops.concat([self.a, self.b], 1).output(0)
        if self.rows == 1:
            return joined
        return ops.unsqueeze(joined, ops.constant(np.array([0], np.int64))).output(0)


class SumOuterProductsAfterLoop(LoopPass):
    """A carried value that each iteration only adds a product contracting the iteration's
    rows to, acc = acc + a_t^T b_t, read after the loop only as its last value, becomes the
    stack of [a_t, b_t] (a concatenated output) and one product after the loop::

        acc = acc + MatMul(a_t, b_t, transpose_a)   ->   parts += [concat(a_t, b_t, axis 1)]
        result: acc                                  ->   acc0 + A^T B   (A, B the stacks)

    The gradient of a weight matrix through a scan (PyTensor's and every RNN's backward pass)
    is such a sum: the Loop then adds an [m, n] matrix per iteration (an outer product of two
    rows, m n multiply-adds and a read and write of the whole accumulator), after it one GEMM
    of the stacked rows does the same sums, in another order. a and b have rank 2 and static
    shapes, acc the product's static shape and type; no other body node reads acc.
    """

    name = "sum-outer-products"
    level = "max"

    def run(self, loop: LoopIR) -> LoopIR:
        sums = _sums(loop)
        if not sums:
            return loop
        results = list(loop.body.get_results())
        by_result = {found.result: found for found in sums}
        for found in sums:
            results[found.result] = ops.result(found.part())
        outputs, moved, taken = split_last_values(loop.spec, by_result)
        summed = {port: by_result[result] for port, result in taken.items()}
        stacks = {}
        for found in sums:
            stacks[found.result] = len(outputs)
            outputs.append(ConcatenatedOutput(UNNUMBERED, found.result, 0, 0, 1, 1, -1))
        spec = renumbered(loop.spec, loop.spec.inputs(), outputs)
        merged = loop.spec.merged_inputs
        changed = loop.with_body(results, list(loop.body.get_parameters()), spec)
        changed = changed.replace(
            carried=without_merged(loop, {found.merged for found in sums}),
            results=tuple(_result(result, moved, summed, stacks, loop) for result in loop.results),
        )
        dropped = {merged[found.merged].body_parameter for found in sums}
        return changed.without_parameters(dropped).noting(
            f"summed {len(sums)} carried outer product(s) after the loop"
        )


def _result(
    result: LoopResult, moved: dict, summed: dict, stacks: dict, loop: LoopIR
) -> LoopResult:
    """`result` reading its output's new port; a summed accumulator's reads the stack, which
    `AddStackedProducts` turns into acc0 + A^T B."""
    if result.port not in summed:
        return result.replace(port=moved[result.port])
    found = summed[result.port]
    entry = loop.spec.merged_inputs[found.merged]
    initial = loop.outer[entry.external_port]
    columns = found.a.get_partial_shape()[1].get_length()
    return LoopResult(
        stacks[found.result], after=(AddStackedProducts(initial, columns, found.rows),)
    )


class AddStackedProducts(Record):
    """The stack of [a_t, b_t] rows (with an axis of their own when `rows` > 1) as the sum of
    their products added to the initial value (SumOuterProductsAfterLoop)::

        A, B = split(reshape(value, [-1, m + n]), [m, n], axis 1)
        value = initial + MatMul(A, B, transpose_a)
    """

    __slots__ = ("initial", "columns", "rows")

    def __init__(self, initial: ov.Output, columns: int, rows: int = 1) -> None:
        self.initial = initial
        self.columns = columns
        self.rows = rows

    phase: ClassVar[int] = 2

    @classmethod
    def apply_all(cls, items, after: AfterLoop) -> list[ov.Output]:
        return [step.summed(value) for value, step in items]

    def summed(self, value: ov.Output) -> ov.Output:
        width = value.get_partial_shape()[-1].get_length()
        flat = ops.reshape(value, ops.constant(np.array([-1, width], np.int64)), False)
        lengths = ops.constant(np.array([self.columns, width - self.columns], np.int64))
        a, b = ops.variadic_split(flat, ops.constant(np.int64(1)), lengths).outputs()
        return ops.add(self.initial, ops.matmul(a, b, True, False)).output(0)


def _sums(loop: LoopIR) -> list[_Sum]:
    """The carried values that qualify (see SumOuterProductsAfterLoop)."""
    live = {node.get_instance_id() for node in loop.body.get_ordered_ops()}
    parameters = loop.body.get_parameters()
    whole = {value.merged[0] for value in loop.carried if len(value.merged) == 1}
    back_edges = [entry.body_result for entry in loop.spec.merged_inputs]
    found = []
    for index, entry in enumerate(loop.spec.merged_inputs):
        parameter = parameters[entry.body_parameter].output(0)
        value = loop.body_value(entry.body_result)
        if (
            index not in whole
            or back_edges.count(entry.body_result) != 1
            or len(live_readers(parameter, live)) != 1
            or len(live_readers(value, live)) != 1  # the back edge's Result alone
            or used_elsewhere(loop, entry.body_result)
        ):
            continue
        product = _product_added(value, parameter)
        if product is not None:
            found.append(_Sum(index, entry.body_result, *product))
    return found


def _product_added(value: ov.Output, carried: ov.Output) -> tuple[ov.Output, ov.Output] | None:
    """(a, b) when `value` = carried + MatMul(a, b, transpose_a) of static rank-2 a [k, m],
    b [k, n], and the sum has carried's static shape and type."""
    add = value.get_node()
    if add.get_type_name() != "Add":
        return None
    others = [v for v in add.input_values() if v != carried]
    if len(others) != 1 or others[0].get_node().get_type_name() != "MatMul":
        return None
    matmul = others[0].get_node()
    attributes = matmul.get_attributes()
    if not attributes["transpose_a"] or attributes["transpose_b"]:
        return None
    a, b = matmul.input_values()
    shapes = [v.get_partial_shape() for v in (a, b, carried, value)]
    if not all(s.is_static for s in shapes) or any(len(s) != 2 for s in shapes):
        return None
    (k, m), (j, n) = (s.to_shape() for s in shapes[:2])
    if k != j or shapes[2] != shapes[3] or list(shapes[2].to_shape()) != [m, n]:
        return None
    if carried.get_element_type() != value.get_element_type():
        return None
    return a, b
