"""Compare ov_loops' own shape inference with onnx's on one model.

Two inferred models agree when every graph (main and each subgraph, by position) types the
same names as inputs, value_info and outputs, with the same element types, ranks, dim values
and symbols; a symbol neither model had before inference (onnx's made-up `unk__N`) may be
renamed, one for one, consistently over the whole model.
"""

from __future__ import annotations

import onnx

from ov_loops.frontends.onnx.proto import extension, inference
from ov_loops.frontends.onnx.proto.inference.kinds import Sequence, Tensor, parse_type
from ov_loops.frontends.onnx.proto.scopes import subgraphs


def _typed_names(graph, path: str, found: dict) -> dict:
    for kind, values in (("input", graph.input), ("value_info", graph.value_info)):
        for value in values:
            found.setdefault((path, value.name), []).append((kind, parse_type(value.type)))
    for value in graph.output:
        found.setdefault((path, value.name), []).append(("output", parse_type(value.type)))
    for index, node in enumerate(graph.node):
        for name, body in subgraphs(node):
            _typed_names(body, f"{path}/{index}.{name}", found)
    return found


def _symbols(value, fixed: set[str]) -> list[str]:
    if isinstance(value, Sequence):
        return _symbols(value.elem, fixed)
    if not isinstance(value, Tensor) or value.shape is None:
        return []
    return [dim for dim in value.shape if isinstance(dim, str) and dim not in fixed]


def _renamed(value, renaming: dict[str, str]):
    if isinstance(value, Sequence):
        return Sequence(_renamed(value.elem, renaming))
    if not isinstance(value, Tensor) or value.shape is None:
        return value
    return Tensor(value.elem, tuple(renaming.get(dim, dim) for dim in value.shape))


def differences(ours: onnx.ModelProto, theirs: onnx.ModelProto, original: onnx.ModelProto):
    """Where the two inferred models' types differ (empty when they agree)."""
    fixed = _all_symbols(original)
    mine, onnxs = _typed_names(ours.graph, "main", {}), _typed_names(theirs.graph, "main", {})
    renaming: dict[str, str] = {}
    for key in sorted(set(mine) & set(onnxs)):
        for (_, a), (_, b) in zip(mine[key], onnxs[key]):
            for x, y in zip(_symbols(a, fixed), _symbols(b, fixed)):
                renaming.setdefault(x, y)
    if len(set(renaming.values())) != len(renaming):
        return ["a made-up symbol of ours stands for two of onnx's"]
    found = []
    for key in sorted(set(mine) | set(onnxs)):
        renamed = [(kind, _renamed(value, renaming)) for kind, value in mine.get(key, [])]
        if renamed != onnxs.get(key, []):
            found.append(f"{key}: ours {renamed}, onnx's {onnxs.get(key)}")
    return found


def _all_symbols(made: onnx.ModelProto) -> set[str]:
    found: set[str] = set()
    graphs = [made.graph]
    while graphs:
        graph = graphs.pop()
        for value in [*graph.input, *graph.output, *graph.value_info]:
            found.update(_symbols(parse_type(value.type), set()))
        graphs.extend(body for node in graph.node for _, body in subgraphs(node))
    return found


def compared(made: onnx.ModelProto, data_prop: bool = False) -> list[str] | None:
    """None when ov_loops' inference does not cover `made`; else the differences between its
    answer and onnx's (onnx's error counts as a difference)."""
    ours = inference.own_inference(made, data_prop)
    if ours is None:
        return None
    try:
        theirs = extension.infer_shapes(made, data_prop=data_prop)
    except Exception as exc:  # ours answered where onnx fails: a difference
        return [f"onnx failed: {exc}"]
    return differences(ours, theirs, made)
