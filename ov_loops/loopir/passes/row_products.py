"""Pass: an invariant matrix times a column, in a Loop body, becomes a row times the matrix
transposed before the loop."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.contract import ports
from ov_loops.contract.spec import InvariantInput
from ov_loops.loopir.analysis import unread_parameters
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass


class MultiplyRowsByInvariants(LoopPass):
    """MatMul(W, c) with W an invariant input [m, k] and c a column [k, 1] (a vector times a
    matrix as PyTensor's scans and gradients write it: Wᵀ arrives transposed, h as a column)
    becomes the same values as a row times Wᵀ, Wᵀ an invariant input transposed once before
    the loop (OpenVINO folds a transpose of a transpose)::

        MatMul(W, c)   ->   Reshape(MatMul(Reshape(c, [1, k]), Wᵀ), [m, 1])

    The CPU plugin (2026.4.1, AVX2, one thread) runs [1, 256] x [256, 256] in 0.86 of the
    time of [256, 256] x [256, 1] in a Loop of 1000 RNN steps (tanh(x_t + h W), unrolled by
    10, 21 interleaved rounds). Shapes static, no transpose flags.
    """

    name = "multiply-rows-by-invariants"
    level = "max"

    def run(self, loop: LoopIR) -> LoopIR:
        invariant = {e.body_parameter: e.external_port for e in loop.spec.invariant_inputs}
        parameters = list(loop.body.get_parameters())
        by_node = {p.get_instance_id(): index for index, p in enumerate(parameters)}
        transposed: dict[int, ov.Output] = {}  # body parameter index -> Wᵀ's Parameter
        for node in loop.body.get_ordered_ops():
            matrix = _column_product(node, invariant, by_node)
            if matrix is None:
                continue
            if matrix not in transposed:
                source = parameters[matrix].output(0)
                shape = [source.get_partial_shape()[1], source.get_partial_shape()[0]]
                parameter = ops.parameter(shape, source.get_element_type())
                parameter.set_friendly_name(f"{loop.path}/transposed{len(transposed)}")
                transposed[matrix] = parameter.output(0)
            node.output(0).replace(_row_product(node, transposed[matrix]))
        if not transposed:
            return loop
        return _with_transposed_inputs(loop, transposed, invariant).noting(
            f"multiplied {len(transposed)} invariant matrix(es) from the left by rows"
        )


def _column_product(node: ov.Node, invariant: dict, by_node: dict) -> int | None:
    """The body parameter index of W when `node` is MatMul(W, c) as the pass takes it."""
    if node.get_type_name() != "MatMul":
        return None
    attributes = node.get_attributes()
    if attributes["transpose_a"] or attributes["transpose_b"]:
        return None
    matrix, column = node.input_values()
    index = by_node.get(matrix.get_node().get_instance_id())
    shapes = [matrix.get_partial_shape(), column.get_partial_shape()]
    if index not in invariant or not all(s.is_static and len(s) == 2 for s in shapes):
        return None
    return index if shapes[1][1].get_length() == 1 else None


def _row_product(node: ov.Node, transposed: ov.Output) -> ov.Output:
    matrix, column = node.input_values()
    rows, inner = matrix.get_partial_shape().to_shape()
    row = ops.reshape(column, ops.constant(np.array([1, inner], np.int64)), False)
    product = ops.matmul(row, transposed, False, False)
    return ops.reshape(product, ops.constant(np.array([rows, 1], np.int64)), False).output(0)


def _with_transposed_inputs(loop: LoopIR, transposed: dict, invariant: dict) -> LoopIR:
    """`loop` with an invariant input per entry of `transposed` (its outer value the matrix
    transposed), unread Parameters dropped."""
    parameters = list(loop.body.get_parameters())
    entries, outer = list(loop.spec.inputs()), dict(loop.outer)
    first = 2 + len(entries)
    order = ops.constant(np.array([1, 0], np.int64))
    for k, (matrix, parameter) in enumerate(transposed.items()):
        parameters.append(parameter.get_node())
        entries.append(InvariantInput(ports.UNNUMBERED, len(parameters) - 1))
        outer[first + k] = ops.transpose(loop.outer[invariant[matrix]], order).output(0)
    spec = ports.renumbered(loop.spec, entries, loop.spec.outputs())
    changed = loop.with_body(list(loop.body.get_results()), parameters, spec).replace(outer=outer)
    unread = unread_parameters(changed, changed.spec.invariant_inputs)
    return changed.without_parameters(unread) if unread else changed
