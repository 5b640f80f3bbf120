"""The fast path for lists a loop only appends to: they become Loop scan outputs.

TorchScript code that appends to a Python list in a loop and stacks or concatenates it after
the loop (`out = []; for ...: out.append(x); torch.stack(out, a)` / `torch.cat(out, a)`)
exports as a Loop carrying an ONNX sequence::

    s0 = SequenceEmpty()                      # or SequenceConstruct(c_1, ..., c_k)
    ..., s_final, ... = Loop(M, cond, ..., s0, ...)
        body(i, cond_in, ..., s_in, ...):
            ...
            s_out = SequenceInsert(s_in, x)   # no position: append (spec: "by default it
            ...                               # inserts 'tensor' to the back")
    y = ConcatFromSequence(s_final, axis=a, new_axis=n)
    length = SequenceLength(s_final)

The rewrite applies where every fact below is visible in the graph: s0 is made in the Loop's
graph by SequenceEmpty or SequenceConstruct; s_out is a body output made by a SequenceInsert
with no position that is a node of the body itself (so it runs exactly once per iteration, not
inside an If); s_in is read by that SequenceInsert only; s_out by nothing but the Loop; s_final
only by ConcatFromSequence and SequenceLength nodes of the Loop's graph (or by nothing). Then the
sequence after iterations 1..n is [c_1, ..., c_k, x_1, ..., x_n], and the Loop gets a scan
output X = x_1..x_n stacked on a new axis 0 (ONNX Loop: "scan_outputs ... concatenated ... along
a new axis 0") instead of carrying s, and its readers become, with r = rank(x)::

    ConcatFromSequence(new_axis=1, axis=a):  # spec: "similar to numpy.stack"; a in [-r-1, r]
        S = Concat(Unsqueeze(c_1, 0), ..., Unsqueeze(c_k, 0), X, axis=0)
        y = S moved from axis 0 to axis a % (r + 1)        # Transpose; nothing for a = 0
    ConcatFromSequence(new_axis=0, axis=a):  # "similar to numpy.concatenate"; a in [-r, r-1]
        b = a % r
        Z = X moved from axis 0 to axis b, merged with the next axis (x_j's axis b)   # Reshape
        y = Concat(c_1, ..., c_k, Z, axis=b)
    SequenceLength:                          # "the number of tensors in 'input_sequence'"
        length = k + Shape(X)[0]

Exactness: a scan output needs every x_j of one shape. Stacking needs that as well (spec: "All
input tensors must have the same shape"), so it is exact. Concatenation lets x_j vary along
the axis, so it is rewritten only when x's shape is proven the same in every iteration: its
dims are numbers or symbols of the main graph's inputs by ONNX shape inference with loop-carried
shapes proven by induction (carried_shapes.py), trusting no declaration. A sequence
of no element (zero iterations, k = 0) is an error for ConcatFromSequence in onnxruntime and in
ONNX's reference; the rewritten model then gives the empty scan output moved as above.
Everything else is left as it is for the general rewrite of sequences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx

from ov_loops.frontends.onnx.carried_shapes import CarriedShapes
from ov_loops.frontends.onnx.opsets import opset_version
from ov_loops.frontends.onnx.scopes import all_graphs, all_names, captured_names, subgraphs
from ov_loops.frontends.onnx.scopes import fresh_name as _fresh

_INITIAL_LISTS = ("SequenceEmpty", "SequenceConstruct")
_LIST_READERS = ("ConcatFromSequence", "SequenceLength")


@dataclass
class AppendedList:
    """A sequence carried by `loop` (carried value `index`) that the body only appends to."""

    loop: onnx.NodeProto
    index: int
    initial: onnx.NodeProto  # SequenceEmpty or SequenceConstruct in the Loop's graph
    insert: onnx.NodeProto  # the body's SequenceInsert(s_in, x)
    readers: list[onnx.NodeProto]  # ConcatFromSequence / SequenceLength of the final list

    @property
    def element(self) -> str:
        """The appended tensor x."""
        return self.insert.input[1]

    @property
    def prepended(self) -> list[str]:
        """The elements the list starts with (SequenceConstruct's inputs)."""
        return list(self.initial.input)


def lists_appended_in_loops_become_scan_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """Turn every sequence a Loop only appends to into a scan output (module docstring).

    Why: OpenVINO has no sequences; a scan output is Loop-5's concatenated output, the fastest
    way to collect per-iteration tensors.
    """
    if (opset_version(model) or 0) < 11 or not _has_sequence_inserts(model):
        return model
    shapes = CarriedShapes(model)
    taken = all_names(model.graph)
    # Innermost graphs first, so no graph changes while one nested in it is being rewritten.
    for graph, _ in reversed(list(all_graphs(model.graph, "main"))):
        for loop in [node for node in graph.node if _is_standard(node, "Loop")]:
            for index in reversed(range(len(loop.input) - 2)):
                found = appended_list(graph, loop, index)
                if found is not None and is_exact(found, shapes):
                    _ListRewrite(graph, found, shapes, taken, opset_version(model)).apply()
    return model


def appended_list(graph: onnx.GraphProto, loop: onnx.NodeProto, index: int) -> AppendedList | None:
    """The append-only list carried by `loop` as carried value `index`, or None."""
    body = next(body for name, body in subgraphs(loop) if name == "body")
    initial = _producer(graph, loop.input[2 + index])
    if initial is None or not _is_standard(initial, *_INITIAL_LISTS):
        return None
    body_input, body_output = body.input[2 + index].name, body.output[1 + index].name
    insert = _producer(body, body_output)
    if insert is None or not _is_standard(insert, "SequenceInsert"):
        return None
    if insert.input[0] != body_input or len(insert.input) > 2 and insert.input[2]:
        return None
    if _readers(body, body_input) != [insert] or _readers(body, body_output, outputs=1) != []:
        return None
    final = loop.output[index] if index < len(loop.output) else ""
    readers = _readers(graph, final) if final else []
    if readers is None or not all(_is_standard(node, *_LIST_READERS) for node in readers):
        return None
    carried = len(loop.input) - 2
    if readers and len(loop.output) != len(body.output) - 1 or len(body.output) <= carried:
        return None  # omitted trailing outputs: no place for a new scan output
    return AppendedList(loop, index, initial, insert, readers)


def _has_sequence_inserts(model: onnx.ModelProto) -> bool:
    return any(
        node.op_type == "SequenceInsert"
        for graph, _ in all_graphs(model.graph, "main")
        for node in graph.node
    )


def _is_standard(node: onnx.NodeProto, *op_types: str) -> bool:
    return node.op_type in op_types and node.domain in ("", "ai.onnx")


def _producer(graph: onnx.GraphProto, name: str) -> onnx.NodeProto | None:
    """The node of `graph` that makes `name` (None: an input, initializer or outer value)."""
    return next((node for node in graph.node if name in node.output), None) if name else None


def _readers(graph: onnx.GraphProto, name: str, outputs: int = 0) -> list[onnx.NodeProto] | None:
    """The nodes of `graph` reading `name`; None when a nested graph reads it, or `graph`'s
    outputs read it more than `outputs` times."""
    if sum(value.name == name for value in graph.output) > outputs:
        return None
    readers = []
    for node in graph.node:
        if any(name in captured_names(body) for _, body in subgraphs(node)):
            return None
        if name in node.input:
            readers.append(node)
    return readers


def is_exact(found: AppendedList, shapes: CarriedShapes) -> bool:
    """Whether each reader of `found` has a rewrite that is exact (module docstring)."""
    rank = shapes.rank(found.element)
    for reader in found.readers:
        if reader.op_type == "SequenceLength":
            continue
        axis, new_axis = _concat_attributes(reader)
        if new_axis:
            if axis != 0 and (rank is None or not -rank - 1 <= axis <= rank):
                return False
        elif rank is None or not -rank <= axis < rank or not shapes.is_fixed(found.element):
            return False
    return True


def _concat_attributes(node: onnx.NodeProto) -> tuple[int, int]:
    """(axis, new_axis) of a ConcatFromSequence node."""
    attributes = {attribute.name: attribute.i for attribute in node.attribute}
    return attributes.get("axis", 0), attributes.get("new_axis", 0)


class _ListRewrite:
    """Rewrites one AppendedList in `graph` (the Loop's graph) as the module docstring says."""

    def __init__(
        self,
        graph: onnx.GraphProto,
        found: AppendedList,
        shapes: CarriedShapes,
        taken: set[str],
        opset: int,
    ) -> None:
        self.graph, self.found, self.shapes = graph, found, shapes
        self.taken, self.opset = taken, opset
        self.body = next(body for name, body in subgraphs(found.loop) if name == "body")
        self.made: list[onnx.NodeProto] = []

    def apply(self) -> None:
        loop, index = self.found.loop, self.found.index
        elem_type = self.shapes.elem_type(self.found.element) or self._list_elem_type()
        removed = {self.body.input[2 + index].name, self.body.output[1 + index].name}
        self.body.node.remove(self.found.insert)
        del self.body.input[2 + index]
        del self.body.output[1 + index]
        initial = loop.input[2 + index]
        del loop.input[2 + index]
        if index < len(loop.output):
            removed.add(loop.output[index])
            del loop.output[index]
        if self.found.readers:
            stacked = self._add_scan_output(elem_type)
            for reader in self.found.readers:
                self._replace(reader, stacked)
        if _readers(self.graph, initial) == []:
            self.graph.node.remove(self.found.initial)
        for graph in (self.graph, self.body):
            kept = [value for value in graph.value_info if value.name not in removed]
            del graph.value_info[:]
            graph.value_info.extend(kept)

    def _list_elem_type(self) -> int:
        """The element type the list declares (body input) or SequenceEmpty's dtype."""
        declared = self.body.input[2 + self.found.index].type.sequence_type.elem_type
        if declared.tensor_type.elem_type:
            return declared.tensor_type.elem_type
        dtypes = [a.i for a in self.found.initial.attribute if a.name == "dtype"]
        if dtypes:
            return dtypes[0]
        if self.found.prepended:
            return self.shapes.elem_type(self.found.prepended[0])
        return onnx.TensorProto.FLOAT  # SequenceEmpty's default

    def _add_scan_output(self, elem_type: int) -> str:
        """The body emits x (through an Identity) as a new scan output; its Loop output name."""
        element = self.found.element
        item = _fresh(f"{element}_appended", self.taken)
        self.body.node.append(onnx.helper.make_node("Identity", [element], [item]))
        shape = self.shapes.shapes.get(element)  # the element's proven shape, if any
        declared = None if shape is None else list(shape)
        self.body.output.append(onnx.helper.make_tensor_value_info(item, elem_type, declared))
        stacked = _fresh(f"{element}_stacked", self.taken)
        self.found.loop.output.append(stacked)
        return stacked

    # -- the readers of the final list -------------------------------------------------------
    def _replace(self, reader: onnx.NodeProto, stacked: str) -> None:
        """Replace `reader` by nodes computing its output from the scan output `stacked`."""
        self.made = []
        if reader.op_type == "SequenceLength":
            result = self._length(stacked)
        else:
            axis, new_axis = _concat_attributes(reader)
            rank = self.shapes.rank(self.found.element)
            if new_axis:
                result = self._stack(stacked, axis % (rank + 1) if axis else 0, rank)
            else:
                result = self._concatenate(stacked, axis % rank, rank)
        if not self.made or self.made[-1].output[0] != result:
            self._emit("Identity", [result])
        self.made[-1].output[0] = reader.output[0]
        position = list(self.graph.node).index(reader)
        self.graph.node.remove(reader)
        for offset, made in enumerate(self.made):
            self.graph.node.insert(position + offset, made)

    def _length(self, stacked: str) -> str:
        """k + Shape(X)[0]."""
        shape = self._emit("Shape", [stacked])
        count = self._emit("Gather", [shape, self._constant(0)], axis=0)
        if not self.found.prepended:
            return count
        return self._emit("Add", [count, self._constant(len(self.found.prepended))])

    def _stack(self, stacked: str, axis: int, rank: int | None) -> str:
        """Concat(Unsqueeze(c_1, 0), ..., X) moved from axis 0 to `axis`."""
        if self.found.prepended:
            firsts = [self._unsqueeze_0(c) for c in self.found.prepended]
            stacked = self._emit("Concat", [*firsts, stacked], axis=0)
        return self._moved(stacked, axis, rank + 1) if axis else stacked

    def _concatenate(self, stacked: str, axis: int, rank: int) -> str:
        """X moved from axis 0 to `axis`, merged with the next axis, after c_1, ..., c_k."""
        moved = self._moved(stacked, axis, rank + 1) if axis else stacked
        shape = self._emit("Shape", [moved])
        parts = [self._slice(shape, axis, axis + 1), self._slice(shape, axis + 1, axis + 2)]
        merged = [self._emit("Mul", parts)]
        if axis:
            merged.insert(0, self._slice(shape, 0, axis))
        if axis + 2 <= rank:
            merged.append(self._slice(shape, axis + 2, rank + 1))
        target = self._emit("Concat", merged, axis=0) if len(merged) > 1 else merged[0]
        joined = self._emit("Reshape", [moved, target])
        if not self.found.prepended:
            return joined
        return self._emit("Concat", [*self.found.prepended, joined], axis=axis)

    def _moved(self, value: str, axis: int, rank: int) -> str:
        """`value` (of `rank`) with its axis 0 moved to `axis`."""
        perm = [*range(1, axis + 1), 0, *range(axis + 1, rank)]
        return self._emit("Transpose", [value], perm=perm)

    def _slice(self, shape: str, start: int, end: int) -> str:
        return self._emit("Slice", [shape, self._constant([start]), self._constant([end])])

    def _unsqueeze_0(self, value: str) -> str:
        if self.opset < 13:
            return self._emit("Unsqueeze", [value], axes=[0])
        return self._emit("Unsqueeze", [value, self._constant([0])])

    def _constant(self, value: int | list[int]) -> str:
        tensor = onnx.numpy_helper.from_array(np.array(value, np.int64))
        return self._emit("Constant", [], value=tensor)

    def _emit(self, op_type: str, inputs: list[str], **attributes: object) -> str:
        """Append a node to the replacement; its (fresh) output name."""
        output = _fresh(f"{self.found.element}_{op_type.lower()}", self.taken)
        self.made.append(onnx.helper.make_node(op_type, inputs, [output], **attributes))
        return output
