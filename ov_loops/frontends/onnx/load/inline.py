"""Normalisation pass: inline model-local functions, so loops inside them are ours too."""

from __future__ import annotations

from ov_loops.errors import InputError, UnsupportedError, UnsupportedItem
from ov_loops.frontends.onnx.proto import extension, schema
from ov_loops.frontends.onnx.proto.scopes import all_graphs, node_label

_STANDARD = ("", "ai.onnx")


def inline_local_functions(model: schema.ModelProto) -> schema.ModelProto:
    """Return `model` with calls to its local functions replaced by their bodies.

    onnx's inliner leaves a function whose ai.onnx opset differs from the model's as a call
    (skl2onnx's KNNImputer: functions at opsets 14 and 16 in a model at 18), which OpenVINO
    cannot convert. Such a function is given the model's opset first when every standard op it
    uses, in its nested graphs too, has the same schema at both versions: the same meaning.
    (The ONNX checker refuses a function whose own nodes differ, but not one whose If branch
    holds such an op.) A call of a function that cannot be is refused (UnsupportedError,
    exit 1: every such call, with the ops that changed).
    """
    if not model.functions:
        return model
    left = _align_opsets(model)
    try:
        inlined = extension.inline_local_functions(model)
    except Exception as exc:  # the inliner raises bare C++ errors
        raise InputError(f"cannot inline the model's local functions: {exc}") from None
    calls = [
        UnsupportedItem(node.op_type, node.domain, None, f"{path}/{node_label(node, index)}", why)
        for graph, path in all_graphs(inlined.graph, "main")
        for index, node in enumerate(graph.node)
        if (why := left.get((node.domain, node.op_type)))
    ]
    if calls:
        raise UnsupportedError(calls)
    return inlined


def _align_opsets(model: schema.ModelProto) -> dict[tuple[str, str], str]:
    """Give each function the model's ai.onnx opset where its ops mean the same at both; the
    others by (domain, name), with why they are not inlined."""
    wanted = next((o.version for o in model.opset_import if o.domain in _STANDARD), None)
    left = {}
    for function in model.functions:
        for opset in function.opset_import:
            if wanted is None or opset.domain not in _STANDARD or opset.version == wanted:
                continue
            ops = _standard_ops(function)
            changed = sorted(op for op in ops if not _same_schema(op, opset.version, wanted))
            if not changed:
                opset.version = wanted
                continue
            left[(function.domain, function.name)] = (
                f"a local function at ai.onnx opset {opset.version} in a model at {wanted}, "
                f"not inlined: {', '.join(changed)} changed between them"
            )
    return left


def _same_schema(op_type: str, version: int, other: int) -> bool:
    """Whether `op_type` has the same schema at ai.onnx opsets `version` and `other`."""
    first = extension.since_version(op_type, version)
    return first is not None and first == extension.since_version(op_type, other)


def _standard_ops(function: schema.FunctionProto) -> set[str]:
    """The ai.onnx op types `function` uses, in its nested graphs too."""
    found: set[str] = set()
    pending = list(function.node)
    while pending:
        node = pending.pop()
        if node.domain in _STANDARD:
            found.add(node.op_type)
        for attr in node.attribute:
            pending.extend(attr.g.node)
            pending.extend(n for graph in attr.graphs for n in graph.node)
    return found
