"""Pass: MatMuls of one value by constant weights become one MatMul and a split (the exporters'
per-gate products: jax2onnx's flax LSTM computes x W_i and h U_i for each of its four gates).

Why: with a symbolic batch the body is dynamic, and the CPU plugin then pays each of its nodes
every iteration (shape checks, dynamic execution) whatever the node computes: a [B, 8] x [8, 8]
MatMul costs as much there as its arithmetic many times over (benchmarks/flax_default.py). One
[B, K] x [K, 4H] MatMul and one VariadicSplit replace four MatMuls; then the gate sums
x W_i + h U_i, slot by slot over two such splits, become one Add before one split.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import openvino as ov
import openvino.opset15 as ops

from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass

# Element types whose weights numpy concatenates exactly.
MERGED_TYPES = {ov.Type.f32, ov.Type.f16, ov.Type.f64}


class MergeSharedMatMuls(LoopPass):
    """Merge the body's MatMuls that read one value by rank-2 constant weights (spec: ONNX
    MatMul / OpenVINO MatMul-1, transposes applied to the weights), then the Adds that sum two
    such merged products slot by slot::

        for a, [MatMul(a, W_1), ..., MatMul(a, W_k)], k >= 2, same transposes and type:
            Y = MatMul(a, concat(W_1..W_k along N));  MatMul(a, W_i) := VariadicSplit(Y, -1)[i]
        for splits S, T of equal axis and lengths whose slot i is read only by Add(S[i], T[i]):
            Add(S[i], T[i]) := VariadicSplit(Add(input(S), input(T)), axis, lengths)[i]

    Exact: a MatMul's columns are independent dot products, and an elementwise op on slices is
    the slices of the op (numpy broadcasting along the split axis excluded: its dims are static
    and equal)."""

    name = "merge-shared-matmuls"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        groups = _groups(loop.body)
        if not groups:
            return loop
        for group in groups:
            _merge_group(group)
        what = f"merged {sum(map(len, groups))} MatMuls into {len(groups)}"
        sums = []
        while (adds := _merge_sum(loop.body)) is not None:
            sums.append(adds)
        if sums:
            what += f", their {sum(sums)} Adds into {len(sums)}"
        return loop.noting(what)


def _weight(matmul: ov.Node) -> np.ndarray | None:
    """The rank-2 constant weight of MatMul `matmul`, or None."""
    source = matmul.input_value(1).get_node()
    if source.get_type_name() != "Constant" or matmul.get_output_element_type(0) not in (
        MERGED_TYPES
    ):
        return None
    if matmul.get_input_partial_shape(0).rank.is_dynamic:
        return None
    weight = source.get_data()
    return weight if weight.ndim == 2 else None


def _groups(body: ov.Model) -> list[list[ov.Node]]:
    """MatMuls with a constant rank-2 weight grouped by the value they read and their
    transposes; groups of two or more, in body order."""
    groups: dict[tuple, list[ov.Node]] = defaultdict(list)
    for node in body.get_ordered_ops():
        if node.get_type_name() != "MatMul" or _weight(node) is None:
            continue
        source = node.input_value(0)
        attributes = node.get_attributes()
        key = (
            source.get_node().get_instance_id(),
            source.get_index(),
            attributes["transpose_a"],
            attributes["transpose_b"],
            node.get_output_element_type(0).get_type_name(),
        )
        groups[key].append(node)
    return [group for group in groups.values() if len(group) >= 2]


def _merge_group(group: list[ov.Node]) -> None:
    """Replace the MatMuls of `group` by one MatMul and a VariadicSplit."""
    first = group[0]
    transpose_a = first.get_attributes()["transpose_a"]
    transpose_b = first.get_attributes()["transpose_b"]
    weights = [_weight(node) for node in group]
    weight = np.concatenate(weights, axis=0 if transpose_b else 1)
    merged = ops.matmul(first.input_value(0), ops.constant(weight), transpose_a, transpose_b)
    merged.set_friendly_name(f"{first.get_friendly_name()}/merged")
    axis = merged.get_output_partial_shape(0).rank.get_length() - 1
    lengths = [w.shape[0] if transpose_b else w.shape[1] for w in weights]
    split = ops.variadic_split(
        merged, ops.constant(np.int64(axis)), ops.constant(np.int64(lengths))
    )
    split.set_friendly_name(f"{first.get_friendly_name()}/split")
    for index, node in enumerate(group):
        node.output(0).replace(split.output(index))


def _split_layout(node: ov.Node) -> tuple | None:
    """(rank, axis, lengths, dim) of VariadicSplit `node` whose axis and lengths are constants
    and whose input has a static rank and a static dim along the axis, else None."""
    if node.get_type_name() != "VariadicSplit":
        return None
    axis_node, lengths_node = (node.input_value(k).get_node() for k in (1, 2))
    if {axis_node.get_type_name(), lengths_node.get_type_name()} != {"Constant"}:
        return None
    shape = node.get_input_partial_shape(0)
    axis = int(axis_node.get_data())
    if shape.rank.is_dynamic or not 0 <= axis < shape.rank.get_length():
        return None
    if shape[axis].is_dynamic:
        return None
    lengths = tuple(int(n) for n in lengths_node.get_data())
    return shape.rank.get_length(), axis, lengths, shape[axis].get_length()


def _paired_split(split: ov.Node) -> tuple[ov.Node, list[ov.Node]] | None:
    """The other split T and the Adds when every slot i of `split` is read only by one Add of
    (split[i], T[i]) and T's slots only by those Adds, T laid out as `split`; else None."""
    layout = _split_layout(split)
    if layout is None:
        return None
    adds, other = [], None
    for index, output in enumerate(split.outputs()):
        readers = list(output.get_target_inputs())
        if len(readers) != 1 or readers[0].get_node().get_type_name() != "Add":
            return None
        add = readers[0].get_node()
        if add.get_attributes().get("auto_broadcast") != "numpy":
            return None
        partner = add.input_value(1 - readers[0].get_index())
        if partner.get_index() != index or len(partner.get_target_inputs()) != 1:
            return None
        node = partner.get_node()
        if other is None:
            other = node
        key = node.get_instance_id()
        if key != other.get_instance_id() or key == split.get_instance_id():
            return None
        adds.append(add)
    if other is None or _split_layout(other) != layout:
        return None
    return other, adds


def _merge_sum(body: ov.Model) -> int | None:
    """Merge the first pair of splits whose slots are summed pairwise (see the class): how many
    Adds it merged, None when there was no such pair."""
    for node in body.get_ordered_ops():
        paired = _paired_split(node)
        if paired is None:
            continue
        other, adds = paired
        summed = ops.add(node.input_value(0), other.input_value(0))
        summed.set_friendly_name(f"{adds[0].get_friendly_name()}/merged")
        split = ops.variadic_split(summed, node.input_value(1), node.input_value(2))
        split.set_friendly_name(f"{adds[0].get_friendly_name()}/split")
        for index, add in enumerate(adds):
            add.output(0).replace(split.output(index))
        return len(adds)
    return None
