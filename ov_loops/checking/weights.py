"""Weights stored as f16: the constants of a model that are f16 and converted to a wider float
before they are used, which `compress_to_fp16` writes (ov-loops' `save`, ovc, `ov.save_model`)
for f32 constants; and how many of them f16 rounded, when the f32 originals are at hand."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import openvino as ov

from ov_loops import ovgraph

_WIDER = (ov.Type.f32, ov.Type.f64)


def f16_weights(model: ov.Model) -> int:
    """How many f16 Constants of `model`, loop and If bodies included, feed a Convert to f32 or
    f64 (0: its weights are stored as they are computed)."""
    return sum(1 for _ in _stored_as_f16(model))


def rounded_weights(saved: ov.Model, original: ov.Model) -> int:
    """How many f16 weights of `saved` (`f16_weights`) differ from the f32 Constants of
    `original` they were compressed from: found by name, as compression names the Convert
    after the Constant it replaces; one whose original is not found counts as rounded."""
    originals: dict[str, list[ov.Node]] = {}
    for op in ovgraph.all_ops(original):
        if op.get_type_name() == "Constant" and op.get_output_element_type(0) == ov.Type.f32:
            originals.setdefault(op.get_friendly_name(), []).append(op)
    rounded = 0
    for _, converts in _stored_as_f16(saved):
        found = [op for convert in converts for op in originals.get(convert, [])]
        rounded += not found or not all(_exact_in_f16(op) for op in found)
    return rounded


def _exact_in_f16(constant: ov.Node) -> bool:
    values = np.asarray(constant.get_data())
    with np.errstate(over="ignore"):
        return bool(np.array_equal(values.astype(np.float16), values, equal_nan=True))


def _stored_as_f16(model: ov.Model) -> Iterator[tuple[ov.Node, list[str]]]:
    """Each f16 Constant feeding a Convert to a wider float, with those Converts' names."""
    for op in ovgraph.all_ops(model):
        if op.get_type_name() != "Constant" or op.get_output_element_type(0) != ov.Type.f16:
            continue
        converts = [
            target.get_node().get_friendly_name()
            for target in op.output(0).get_target_inputs()
            if _widens(target.get_node())
        ]
        if converts:
            yield op, converts


def _widens(node: ov.Node) -> bool:
    return node.get_type_name() == "Convert" and node.get_output_element_type(0) in _WIDER
