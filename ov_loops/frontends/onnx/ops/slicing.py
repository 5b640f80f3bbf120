"""Body rewrite: reading a captured tensor at the iteration number becomes a sliced input.

Semantics kept (ONNX Gather, axis 0; Loop-5 sliced input, axis 0, part size 1)::

    # before: x_t = Gather(X, i)          X captured from an enclosing scope, i the iteration number
    # after:  x_t = Identity(X_slice)     X_slice = Squeeze(X[i : i + 1], axis=0), fed by the Loop

The body no longer sees the whole (often dynamic-length) X, so its shapes can stay static. The
translator caps the trip count at len(X): an iteration i >= len(X) would make the ONNX Gather
fail, so a valid model never runs one.
"""

from __future__ import annotations

from ov_loops.frontends.onnx.ops.layout import SlicedRead
from ov_loops.frontends.onnx.proto import schema
from ov_loops.frontends.onnx.proto.scopes import defined_names, fresh_name

SLICE_SUFFIX = "__ov_loops_slice"


def slice_iteration_gathers(
    body: schema.GraphProto, captures: list[str]
) -> tuple[schema.GraphProto, list[SlicedRead]]:
    """Rewrite the body's top-level `Gather(capture, iteration number)` nodes (axis 0).

    Each rewritten node keeps its place and name (node paths stay valid) and becomes an Identity
    of the slice input. Returns the rewritten body and the sliced captures, in first-use order
    (`body` itself when there is no such node).
    """
    iteration = body.input[0].name
    captured = set(captures)
    if not any(_reads_at_iteration(node, iteration, captured) for node in body.node):
        return body, []
    taken = defined_names(body) | captured
    sliced: dict[str, SlicedRead] = {}
    rewritten = schema.GraphProto()
    rewritten.CopyFrom(body)
    for node in rewritten.node:
        if not _reads_at_iteration(node, iteration, captured):
            continue
        source = node.input[0]
        if source not in sliced:
            sliced[source] = SlicedRead(source, fresh_name(f"{source}{SLICE_SUFFIX}", taken))
        node.op_type = "Identity"
        del node.input[:]
        node.input.append(sliced[source].body_input)
        del node.attribute[:]
    return rewritten, list(sliced.values())


def _reads_at_iteration(node: schema.NodeProto, iteration: str, captured: set[str]) -> bool:
    if node.op_type != "Gather" or node.domain not in ("", "ai.onnx") or len(node.input) != 2:
        return False
    axis = next((attr.i for attr in node.attribute if attr.name == "axis"), 0)
    return axis == 0 and node.input[1] == iteration and node.input[0] in captured
