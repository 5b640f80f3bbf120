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
output X = stack(x_1, ..., x_n) on a new axis 0 (the Loop schema's doc, onnx.defs: "Scan_output
variables are used to implicitly concatenate values computed across all the iterations";
onnxruntime and ov-loops stack them on a new axis 0) instead of carrying s, and its readers
become, with r = rank(x) (quotes from onnx.defs.get_schema(op).doc and its attributes)::

    ConcatFromSequence(new_axis=1, axis=a):  # spec: "similar to numpy.stack"; a in [-r-1, r]
        S = Concat(Unsqueeze(c_1, 0), ..., Unsqueeze(c_k, 0), X, axis=0)
        y = S moved from axis 0 to axis a % (r + 1)        # Transpose; nothing for a = 0
    ConcatFromSequence(new_axis=0, axis=a):  # "similar to numpy.concatenate"; a in [-r, r-1]
        b = a % r
        Z = X moved from axis 0 to axis b, merged with the next axis (x_j's axis b)   # Reshape
        y = Concat(c_1, ..., c_k, Z, axis=b)
    SequenceLength:                          # "the number of tensors in 'input_sequence'"
        length = k + Shape(X)[0]

The list may instead be threaded through inner Loops of the body (`for i: for j in
range(K): out.append(x)`): s_out is made by an inner Loop L2 of the body whose carried value
starts from s_in (read by nothing else) and is, in L2's body, appended to by the same rules,
recursively. Each such L2 must run the same number m of iterations every time: its trip count
is a value that does not vary in the outer body (computed only from constants and values from
outside; no input of a body, no random op, no node with a subgraph), its condition input is
absent or a constant true, its body's condition output a constant true or the condition input
passed through. Then L2 gets the scan output [m, *x], the outer Loop [n, m, *x], and::

    X = Reshape([n, m_1, ..., m_d, *x] -> [n * m_1 * ... * m_d, *x])   # elements in order

before the readers above.

Exactness: a scan output needs every x_j of one shape. Stacking needs that as well (spec: "All
input tensors must have the same shape"), so a list with a stacking reader is exact.
Concatenation lets x_j vary along the axis, and SequenceLength reads no element, so without a
stacking reader a list is rewritten only when x's shape is proven the same in every iteration: its
dims are numbers or symbols of the main graph's inputs by ONNX shape inference with loop-carried
shapes proven by induction (carried_shapes.py), trusting no declaration. A sequence of no
element (zero iterations, k = 0) is an error for ConcatFromSequence in onnxruntime and in
ONNX's reference; the rewritten model then gives the empty scan output moved as above.
Everything else is left as it is for the general rewrite of sequences.
"""

from __future__ import annotations

import numpy as np

from ov_loops.frontends.onnx.ops.loop import is_loop
from ov_loops.frontends.onnx.proto import helpers, schema
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import (
    all_graphs,
    all_names,
    captured_names,
    subgraphs,
)
from ov_loops.frontends.onnx.proto.scopes import fresh_name as _fresh
from ov_loops.frontends.onnx.rewrites.sequences.carried_shapes import CarriedShapes
from ov_loops.record import Record

_INITIAL_LISTS = ("SequenceEmpty", "SequenceConstruct")
_TO_THE_END = 2**62  # a Slice end past the last dim
_RANDOM_OPS = frozenset(
    {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike"}
    | {"Multinomial", "Bernoulli"}
)
_LIST_READERS = ("ConcatFromSequence", "SequenceLength")


class AppendedList(Record):
    """A sequence carried by `loop` (carried value `index`) that the body only appends to,
    itself or through the inner Loops `threads` (outermost first, each with the carried index
    the list has there), each of which runs the same number of iterations every time."""

    __slots__ = ("loop", "index", "initial", "insert", "readers", "threads")

    def __init__(
        self,
        loop: schema.NodeProto,
        index: int,
        initial: schema.NodeProto,
        insert: schema.NodeProto,
        readers: list[schema.NodeProto],
        threads: list[tuple[schema.NodeProto, int]],
    ) -> None:
        self.loop = loop
        self.index = index
        self.initial = initial  # SequenceEmpty or SequenceConstruct in the Loop's graph
        self.insert = insert  # the innermost body's SequenceInsert(s_in, x)
        self.readers = readers  # ConcatFromSequence / SequenceLength of the final list
        self.threads = threads

    @property
    def element(self) -> str:
        """The appended tensor x."""
        return self.insert.input[1]

    @property
    def prepended(self) -> list[str]:
        """The elements the list starts with (SequenceConstruct's inputs)."""
        return list(self.initial.input)

    @property
    def levels(self) -> list[tuple[schema.NodeProto, int]]:
        """(Loop, carried index) from the outermost Loop to the one whose body appends."""
        return [(self.loop, self.index), *self.threads]


def lists_appended_in_loops_become_scan_outputs(model: schema.ModelProto) -> schema.ModelProto:
    """Turn every sequence a Loop only appends to into a scan output (module docstring).

    Why: OpenVINO has no sequences; a scan output is Loop-5's concatenated output, the fastest
    way to collect per-iteration tensors.
    """
    if (opset_version(model) or 0) < 13 or not _has_sequence_inserts(model):
        # Loop carries sequences from Loop-13 on
        return model
    shapes: CarriedShapes | None = None  # inferred once, when a list is found
    taken = all_names(model.graph)
    trues = _true_constants(model)
    # Innermost graphs first, so no graph changes while one nested in it is being rewritten.
    for graph, _ in reversed(list(all_graphs(model.graph, "main"))):
        for loop in [node for node in graph.node if is_loop(node)]:
            for index in reversed(range(len(loop.input) - 2)):
                found = appended_list(graph, loop, index, trues)
                if found is None:
                    continue
                shapes = shapes or CarriedShapes(model)
                if is_exact(found, shapes):
                    _ListRewrite(graph, found, shapes, taken).apply()
    return model


def appended_list(
    graph: schema.GraphProto, loop: schema.NodeProto, index: int, trues: set[str]
) -> AppendedList | None:
    """The append-only list carried by `loop` as carried value `index`, or None. `trues`
    names the values known to be a constant true (for inner loops' conditions)."""
    initial = _producer(graph, loop.input[2 + index])
    if initial is None or not _is_standard(initial, *_INITIAL_LISTS):
        return None
    final = loop.output[index] if index < len(loop.output) else ""
    readers = _readers(graph, final) if final else []
    if readers is None or not all(_is_standard(node, *_LIST_READERS) for node in readers):
        return None
    chain = _appending_chain(loop, index, trues)
    if chain is None:
        return None
    threads, insert = chain
    levels = [loop, *(inner for inner, _ in threads)]
    if readers and any(len(each.output) != len(_body(each).output) - 1 for each in levels):
        return None  # omitted trailing outputs: no place for a new scan output
    return AppendedList(loop, index, initial, insert, readers, threads)


def _appending_chain(
    loop: schema.NodeProto, index: int, trues: set[str]
) -> tuple[list[tuple[schema.NodeProto, int]], schema.NodeProto] | None:
    """(the inner Loops the list is threaded through, the SequenceInsert appending to it),
    or None. At each level the body input is read only by the next level (an inner Loop's
    initial value or the SequenceInsert, with no position) and the body output only made
    there; each level is a node of the body, so it runs once per iteration."""
    varying = _varying_inside(_body(loop))  # inner trip counts must not vary
    threads: list[tuple[schema.NodeProto, int]] = []
    while True:
        body = _body(loop)
        body_input, body_output = body.input[2 + index].name, body.output[1 + index].name
        producer = _producer(body, body_output)
        if producer is None or _readers(body, body_output, outputs=1) != []:
            return None
        if _readers(body, body_input) != [producer]:
            return None
        if _is_standard(producer, "SequenceInsert"):
            if producer.input[0] != body_input or len(producer.input) > 2 and producer.input[2]:
                return None
            return threads, producer
        if not is_loop(producer) or list(producer.input).count(body_input) != 1:
            return None
        inner_index = list(producer.output).index(body_output)
        carried = producer.input[2:]
        if inner_index >= len(carried) or carried[inner_index] != body_input:
            return None
        if not _runs_its_trip_count(producer, varying, trues):
            return None
        threads.append((producer, inner_index))
        loop, index = producer, inner_index


def _runs_its_trip_count(loop: schema.NodeProto, varying: set[str], trues: set[str]) -> bool:
    """Whether `loop` runs its trip count, a value not in `varying`, every time: its
    condition is absent or true, and its body's condition output a constant true or the
    condition input passed through."""
    trip_count, condition = loop.input[0], loop.input[1]
    if not trip_count or trip_count in varying or condition and condition not in trues:
        return False
    body = _body(loop)
    return body.output[0].name in trues or body.output[0].name == body.input[1].name


def _true_constants(model: schema.ModelProto) -> set[str]:
    """Names of Constant nodes holding one true, and of Identity chains of them."""
    trues: set[str] = set()
    nodes = [node for graph, _ in all_graphs(model.graph, "main") for node in graph.node]
    for node in nodes:
        if _is_standard(node, "Constant") and len(node.attribute) == 1:
            attribute = node.attribute[0]
            if attribute.name == "value" and attribute.t.data_type == schema.TensorProto.BOOL:
                value = helpers.to_array(attribute.t)
                if value.size == 1 and bool(value.reshape(-1)[0]):
                    trues.add(node.output[0])
    grown = True
    while grown:
        before = len(trues)
        trues.update(
            node.output[0]
            for node in nodes
            if _is_standard(node, "Identity") and node.input[0] in trues
        )
        grown = len(trues) > before
    return trues


def _varying_inside(body: schema.GraphProto) -> set[str]:
    """Names `body` or a graph nested in it computes that may differ between iterations: the
    graphs' inputs, outputs of random ops and of nodes with a subgraph, and whatever is
    computed from those. Everything else (constants, values from outside) is the same."""
    varying: set[str] = set()
    for graph, _ in all_graphs(body, "body"):  # a graph before those nested in it
        varying.update(value.name for value in graph.input)
        for node in graph.node:
            if (
                node.op_type in _RANDOM_OPS
                or any(True for _ in subgraphs(node))
                or any(name in varying for name in node.input)
            ):
                varying.update(node.output)
    return varying


def _body(loop: schema.NodeProto) -> schema.GraphProto:
    return next(body for name, body in subgraphs(loop) if name == "body")


def _drop_carried(loop: schema.NodeProto, index: int) -> set[str]:
    """Remove carried value `index` from `loop` and its body; the names that went away."""
    body = _body(loop)
    removed = {body.input[2 + index].name, body.output[1 + index].name}
    del body.input[2 + index]
    del body.output[1 + index]
    del loop.input[2 + index]
    if index < len(loop.output):
        removed.add(loop.output[index])
        del loop.output[index]
    return removed


def _drop_value_info(graph: schema.GraphProto, removed: set[str]) -> None:
    kept = [value for value in graph.value_info if value.name not in removed]
    del graph.value_info[:]
    graph.value_info.extend(kept)


def _has_sequence_inserts(model: schema.ModelProto) -> bool:
    return any(
        node.op_type == "SequenceInsert"
        for graph, _ in all_graphs(model.graph, "main")
        for node in graph.node
    )


def _is_standard(node: schema.NodeProto, *op_types: str) -> bool:
    return node.op_type in op_types and node.domain in ("", "ai.onnx")


def _producer(graph: schema.GraphProto, name: str) -> schema.NodeProto | None:
    """The node of `graph` that makes `name` (None: an input, initializer or outer value)."""
    return next((node for node in graph.node if name in node.output), None) if name else None


def _readers(
    graph: schema.GraphProto, name: str, outputs: int = 0
) -> list[schema.NodeProto] | None:
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
    """Whether each reader of `found` has a rewrite that is exact (module docstring): the
    scan output needs x of one shape, which a stacking reader demands of a valid model
    anyway; without one (concatenation, SequenceLength only), x's shape must be proven fixed."""
    rank = shapes.rank(found.element)
    stacked = False
    for reader in found.readers:
        if reader.op_type == "SequenceLength":
            continue
        axis, new_axis = _concat_attributes(reader)
        if new_axis:
            stacked = True
            if axis != 0 and (rank is None or not -rank - 1 <= axis <= rank):
                return False
        elif rank is None or not -rank <= axis < rank:
            return False
    return stacked or not found.readers or shapes.is_fixed(found.element)


def _concat_attributes(node: schema.NodeProto) -> tuple[int, int]:
    """(axis, new_axis) of a ConcatFromSequence node."""
    attributes = {attribute.name: attribute.i for attribute in node.attribute}
    return attributes.get("axis", 0), attributes.get("new_axis", 0)


class _ListRewrite:
    """Rewrites one AppendedList in `graph` (the Loop's graph) as the module docstring says."""

    def __init__(
        self,
        graph: schema.GraphProto,
        found: AppendedList,
        shapes: CarriedShapes,
        taken: set[str],
    ) -> None:
        self.graph, self.found, self.shapes, self.taken = graph, found, shapes, taken
        self.made: list[schema.NodeProto] = []

    def apply(self) -> None:
        """From the innermost level out: drop the carried list, emit what the level appends
        per iteration (x, or the inner Loop's new scan output) as a scan output."""
        elem_type = self.shapes.elem_type(self.found.element) or self._list_elem_type()
        shape = self.shapes.shapes.get(self.found.element)  # the element's proven shape
        item, declared = self.found.element, None if shape is None else list(shape)
        initial = self.found.loop.input[2 + self.found.index]
        removed: set[str] = set()
        for depth, (loop, index) in reversed(list(enumerate(self.found.levels))):
            body = _body(loop)
            if depth == len(self.found.threads):
                body.node.remove(self.found.insert)
            removed |= _drop_carried(loop, index)
            if self.found.readers:
                item = self._add_scan_output(loop, item, elem_type, declared)
                declared = None if declared is None else [None, *declared]
            _drop_value_info(body, removed)
        if self.found.readers:
            stacked = self._merged_levels(item) if self.found.threads else item
            for reader in self.found.readers:
                self._replace(reader, stacked)
        if _readers(self.graph, initial) == []:
            self.graph.node.remove(self.found.initial)
        _drop_value_info(self.graph, removed)

    def _list_elem_type(self) -> int:
        """The element type the list declares (body input) or SequenceEmpty's dtype."""
        loop, index = self.found.levels[-1]
        declared = _body(loop).input[2 + index].type.sequence_type.elem_type
        if declared.tensor_type.elem_type:
            return declared.tensor_type.elem_type
        dtypes = [a.i for a in self.found.initial.attribute if a.name == "dtype"]
        if dtypes:
            return dtypes[0]
        if self.found.prepended:
            return self.shapes.elem_type(self.found.prepended[0])
        return schema.TensorProto.FLOAT  # SequenceEmpty's default

    def _add_scan_output(
        self, loop: schema.NodeProto, item: str, elem_type: int, declared: list | None
    ) -> str:
        """`loop`'s body emits `item` (through an Identity) as a new scan output; the name of
        the Loop's new output."""
        body = _body(loop)
        emitted = _fresh(f"{self.found.element}_appended", self.taken)
        body.node.append(helpers.make_node("Identity", [item], [emitted]))
        body.output.append(helpers.make_tensor_value_info(emitted, elem_type, declared))
        stacked = _fresh(f"{self.found.element}_stacked", self.taken)
        loop.output.append(stacked)
        return stacked

    def _merged_levels(self, stacked: str) -> str:
        """[n, m_1, ..., m_d, *x] -> [n * m_1 * ... * m_d, *x], before the first reader."""
        self.made = []
        shape = self._emit("Shape", [stacked])
        count = self._slice(shape, 0, 1)
        for level in range(1, len(self.found.levels)):
            count = self._emit("Mul", [count, self._slice(shape, level, level + 1)])
        rest = self._slice(shape, len(self.found.levels), _TO_THE_END)
        target = self._emit("Concat", [count, rest], axis=0)
        merged = self._emit("Reshape", [stacked, target])
        position = list(self.graph.node).index(self.found.readers[0])
        for offset, made in enumerate(self.made):
            self.graph.node.insert(position + offset, made)
        return merged

    # -- the readers of the final list -------------------------------------------------------
    def _replace(self, reader: schema.NodeProto, stacked: str) -> None:
        """Replace `reader` by nodes computing its output from the scan output `stacked`; a
        sole reader that would be an Identity of `stacked` (a stack on axis 0 with nothing
        prepended) names `stacked` instead: OpenVINO runs an Identity as a copy of the whole
        stack."""
        if len(self.found.readers) == 1 and self._is_stacked_as_is(reader):
            producer = _producer(self.graph, stacked)
            producer.output[list(producer.output).index(stacked)] = reader.output[0]
            self.graph.node.remove(reader)
            return
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

    def _is_stacked_as_is(self, reader: schema.NodeProto) -> bool:
        """Whether `reader` is a ConcatFromSequence that stacks on axis 0 with no tensor
        prepended: its output is the scan output itself."""
        if reader.op_type == "SequenceLength" or self.found.prepended:
            return False
        axis, new_axis = _concat_attributes(reader)
        rank = self.shapes.rank(self.found.element)
        return bool(new_axis) and (axis == 0 or (rank is not None and axis % (rank + 1) == 0))

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
        return self._emit("Unsqueeze", [value, self._constant([0])])  # Unsqueeze-13's axes

    def _constant(self, value: int | list[int]) -> str:
        tensor = helpers.from_array(np.array(value, np.int64))
        return self._emit("Constant", [], value=tensor)

    def _emit(self, op_type: str, inputs: list[str], **attributes: object) -> str:
        """Append a node to the replacement; its (fresh) output name."""
        output = _fresh(f"{self.found.element}_{op_type.lower()}", self.taken)
        self.made.append(helpers.make_node(op_type, inputs, [output], **attributes))
        return output
