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

from ov_loops import ovgraph
from ov_loops.frontends.pytensor.dispatch import (
    cast,
    graph_ops,
    inner_ops,
    ov_translate,
    translate_graph,
)


@ov_translate.register(IfElse)
def _ifelse(op, node, inputs):
    condition, branches = inputs[0], inputs[1:]
    dtypes = [variable.type.dtype for variable in node.outputs]
    then_values = [cast(v, d) for v, d in zip(branches[: op.n_outs], dtypes)]
    else_values = [cast(v, d) for v, d in zip(branches[op.n_outs :], dtypes)]
    condition = ops.convert(condition, ov.Type.boolean).output(0)
    branches = [(ovgraph.identity_body(values), values) for values in (then_values, else_values)]
    return ovgraph.if_outputs(condition, *branches)


@ov_translate.register(OpFromGraph)
def _op_from_graph(op, node, inputs):
    return translate_graph(op.fgraph, inputs)


@inner_ops.register(OpFromGraph)
def _op_from_graph_ops(op):
    return graph_ops(op.fgraph)
