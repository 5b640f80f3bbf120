"""ov_loops' own ONNX type and shape inference, for the ops the corpus's models use.

It gives what onnx's (onnx.shape_inference.infer_shapes, check_type and strict_mode off)
gives, for models it covers: every node of every graph an op of the default domain it has a
rule for, at ai.onnx opset 13 to 23, IR version 4 or newer, no local functions, values of
tensor and sequence-of-tensor types. Anywhere it is unsure of onnx's answer (an op onnx would
fail on, a type it does not model) it answers None, and the caller runs onnx's. It fills no
op-schema registry (onnx's: 7 MiB on the first call) and makes no serialisation round trip.
With data propagation (data_prop), a rule that would read a shape value onnx may have
propagated (not a constant of the node's graph) is unsure (proto/inference/shaping.py).
"""

from __future__ import annotations

from ov_loops.frontends.onnx.proto import extension, schema
from ov_loops.frontends.onnx.proto.inference import (
    control,
    elementwise,
    sequence,
    shaping,
    tensor,
)
from ov_loops.frontends.onnx.proto.inference.graphs import GraphWalk
from ov_loops.frontends.onnx.proto.inference.kinds import Symbols, Unsure
from ov_loops.frontends.onnx.proto.scopes import subgraphs

RULES = {**elementwise.RULES, **tensor.RULES, **shaping.RULES, **control.RULES, **sequence.RULES}
_OPSETS = range(13, 24)


def infer_shapes(model: schema.ModelProto, data_prop: bool = False) -> schema.ModelProto:
    """`model` with the types onnx's shape inference finds (extension.infer_shapes): ours
    when it covers the model, else onnx's (which raises what onnx raises)."""
    return own_inference(model, data_prop) or extension.infer_shapes(model, data_prop=data_prop)


def own_inference(model: schema.ModelProto, data_prop: bool = False) -> schema.ModelProto | None:
    """`model` with the types onnx's shape inference finds, or None when ov_loops' inference
    does not cover it."""
    graphs = _graphs(model.graph)
    opset = _default_opset(model)
    if opset is None or model.ir_version < 4 or model.functions or graphs is None:
        return None
    inferred = schema.ModelProto()
    inferred.CopyFrom(model)
    try:
        walk = GraphWalk(RULES, Symbols(inferred, _graphs(inferred.graph)), opset, data_prop)
        walk.infer(inferred.graph, {})
    except Unsure:
        return None
    return inferred


def _default_opset(model: schema.ModelProto) -> int | None:
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if len(versions) == 1 and versions[0] in _OPSETS else None


def _graphs(graph: schema.GraphProto) -> list[schema.GraphProto] | None:
    """`graph` and all its subgraphs; None when a node is of an op without a rule."""
    found = [graph]
    for node in graph.node:
        if node.domain not in ("", "ai.onnx") or node.op_type not in RULES:
            return None
        for _, body in subgraphs(node):
            inner = _graphs(body)
            if inner is None:
                return None
            found.extend(inner)
    return found
