"""Ops holding graphs or branches: IfElse as an OpenVINO If, OpFromGraph inlined.

IfElse(c, *then, *else) = If(c): then body passes `then` on, else body `else`
                          (both branches are computed before the If: not lazy)
OpFromGraph(*xs)        = its inner graph translated on xs
"""

from __future__ import annotations

import openvino as ov
import openvino.opset15 as ops
from pytensor.compile.builders import OpFromGraph
from pytensor.ifelse import IfElse

from ov_loops.frontends.pytensor.dispatch import (
    cast,
    graph_ops,
    inner_ops,
    ov_translate,
    translate_graph,
)


def _pass_through(values: list[ov.Output]) -> tuple[ov.Model, list]:
    """A body whose Results are its Parameters, one per value (of its type)."""
    parameters = [ops.parameter(v.get_partial_shape(), v.get_element_type()) for v in values]
    return ov.Model([ops.result(p) for p in parameters], parameters), parameters


@ov_translate.register(IfElse)
def _ifelse(op, node, inputs):
    condition, branches = inputs[0], inputs[1:]
    dtypes = [variable.type.dtype for variable in node.outputs]
    then_values = [cast(v, d) for v, d in zip(branches[: op.n_outs], dtypes)]
    else_values = [cast(v, d) for v, d in zip(branches[op.n_outs :], dtypes)]
    # an Output, not a Node: if_op(Node) makes an If without its condition input
    branch = ops.if_op(ops.convert(condition, ov.Type.boolean).output(0))
    then_body, then_parameters = _pass_through(then_values)
    else_body, else_parameters = _pass_through(else_values)
    branch.set_then_body(then_body)
    branch.set_else_body(else_body)
    for value, parameter in zip(then_values, then_parameters):
        branch.set_input(value, parameter, None)
    for value, parameter in zip(else_values, else_parameters):
        branch.set_input(value, None, parameter)
    return [
        branch.set_output(then_result, else_result)
        for then_result, else_result in zip(then_body.get_results(), else_body.get_results())
    ]


@ov_translate.register(OpFromGraph)
def _op_from_graph(op, node, inputs):
    return translate_graph(op.fgraph, inputs)


@inner_ops.register(OpFromGraph)
def _op_from_graph_ops(op):
    return graph_ops(op.fgraph)
