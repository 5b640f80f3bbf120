"""Sequence- and Optional-typed values become tensors, in every graph, before conversion.

Every sequence becomes four tensors (buffer, sizes, ranks, shapes; see sequence_ops.py), an
Optional of a tensor a sequence of zero or one element, an Optional of a sequence the sequence's
four and a bool `present`. Sequence ops become tensor ops on them (sequence_nodes.py):

    Loop     a carried sequence -> its parts carried (1-D, of any length), recorded (the body
             inputs carrying them, proto/sequence_parts.py) so that the frontend makes
             them one CarriedValue
    If       a branch output sequence -> its parts output by both branches
    captures a body reading an outer sequence reads its parts
    model    a sequence input/output `x` -> inputs/outputs x, x.sizes, x.ranks, x.shapes
             (x.present for an Optional of a sequence), recorded for `check`;
             ov_loops.frontends.onnx.sequence_io packs and unpacks Python lists

A carried sequence's element rank is the fixpoint of its initial value's and the body's
(ranks known before run time keep SequenceAt's result of static rank). What has no tensor form
(a map, a sequence of sequences, an op with a sequence input and no rewrite) is one
UnsupportedItem per node, raised together before the frontend runs.
"""

from __future__ import annotations

import contextlib
import copy

from ov_loops.errors import UnsupportedError, UnsupportedItem
from ov_loops.frontends.onnx.ops.loop import is_loop
from ov_loops.frontends.onnx.proto import helpers, inference, schema
from ov_loops.frontends.onnx.proto.opsets import opset_version
from ov_loops.frontends.onnx.proto.scopes import (
    all_graphs,
    all_names,
    fresh_name,
    node_label,
    subgraphs,
)
from ov_loops.frontends.onnx.proto.sequence_parts import SequenceParts
from ov_loops.frontends.onnx.rewrites.sequences.carried_shapes import (
    CarriedShapes,
    outer_constants_inside,
)
from ov_loops.frontends.onnx.rewrites.sequences.sequence_emit import Emit
from ov_loops.frontends.onnx.rewrites.sequences.sequence_nodes import (
    HANDLERS,
    Scope,
    TensorInfo,
    as_kind,
    propagate_rank,
    widen,
)
from ov_loops.frontends.onnx.rewrites.sequences.sequence_ops import Sequence, join_ranks
from ov_loops.frontends.onnx.rewrites.sequences.sequence_types import (
    OPTIONAL,
    OPTIONAL_SEQUENCE,
    SEQUENCE,
    TENSOR,
    declared_rank,
    element_type,
    has_sequences,
    kind_of,
    part_infos,
    part_names,
)

STANDARD = ("", "ai.onnx")
Plan = list  # per carried value: (kind, rank, element type, dims), or None for a tensor
_WIDENINGS = 8  # a plan widens at most rank + 2 times: empty -> a rank and dims -> fewer dims


def lower_sequences(
    model: schema.ModelProto, record: SequenceParts | None = None
) -> schema.ModelProto:
    """Replace every Sequence/Optional value of every graph by tensors (the module docstring);
    `record` receives the parts of the sequences Loops carry and of the model's inputs.

    Why: OpenVINO's ONNX frontend converts only a few sequence patterns, and a Loop-5 port
    carries a tensor; tensors also let the LoopIR passes see every value.
    """
    if not has_sequences(model):
        return model
    _name_nodes(model)
    lowering = SequenceLowering(model, SequenceParts() if record is None else record)
    lowering.main(model.graph)
    if lowering.items:
        raise UnsupportedError(lowering.items)
    return model


def _name_nodes(model: schema.ModelProto) -> None:
    """Name each unnamed node by its label, so that its path stays the same when nodes are
    inserted before it."""
    for graph, _ in all_graphs(model.graph, "main"):
        used = {node.name for node in graph.node}
        for index, node in enumerate(graph.node):
            if not node.name and node_label(node, index) not in used:
                node.name = node_label(node, index)
                used.add(node.name)


def _tensor_info(model: schema.ModelProto) -> TensorInfo:
    """(element type, rank or None) of each tensor ONNX shape inference types, trusting no
    declared sequence element shape (producers declare wrong ones); the dims proven of those
    a ConcatFromSequence may read (_proven_dims)."""
    stripped = schema.ModelProto()
    stripped.CopyFrom(model)
    for graph, _ in all_graphs(stripped.graph, "main"):
        for info in [*graph.input, *graph.output, *graph.value_info]:
            if kind_of(info.type) not in (TENSOR, None):
                element_type(info.type).tensor_type.ClearField("shape")
    outer_constants_inside(stripped.graph)
    with contextlib.suppress(Exception):  # inference is a help, not a requirement
        stripped = inference.infer_shapes(stripped)
    found = {}
    for graph, _ in all_graphs(stripped.graph, "main"):
        for tensor in graph.initializer:
            found[tensor.name] = (tensor.data_type, len(tensor.dims))
        for info in [*graph.input, *graph.output, *graph.value_info]:
            if kind_of(info.type) == TENSOR:
                tensor = info.type.tensor_type
                found[info.name] = (tensor.elem_type, declared_rank(info.type))
    concats = any(
        node.op_type == "ConcatFromSequence"
        for graph, _ in all_graphs(model.graph, "main")
        for node in graph.node
    )
    proven = _proven(model, concats or any(rank is None for _, rank in found.values()), concats)
    return TensorInfo(found | _proven_ranks(proven, found), _proven_dims(proven))


def _proven(model: schema.ModelProto, wanted: bool, data_prop: bool) -> CarriedShapes | None:
    """The shapes proven by induction (CarriedShapes), when `wanted` and found."""
    if not wanted:
        return None
    try:
        return CarriedShapes(model, data_prop=data_prop)
    except Exception:  # a help, like inference
        return None


def _proven_ranks(proven: CarriedShapes | None, found: dict) -> dict[str, tuple[int, int]]:
    """Ranks of tensors in loop bodies that shape inference left open (carried values declared
    without a shape, and what the body computes from them), proven by induction."""
    ranks = {}
    for name, shape in proven.shapes.items() if proven else ():
        if shape is not None and found.get(name, (0, None))[1] is None:
            ranks[name] = (found.get(name, (proven.elem_type(name), None))[0], len(shape))
    return ranks


def _proven_dims(proven: CarriedShapes | None) -> dict[str, tuple[int | None, ...]]:
    """The dims proven of each tensor: an int where it is the same number in every iteration
    of every run, else None (a main input's symbol varies between runs)."""
    return {
        name: tuple(dim if isinstance(dim, int) else None for dim in shape)
        for name, shape in (proven.shapes.items() if proven else ())
        if shape is not None
    }


class SequenceLowering:
    """Rewrites graphs in place, collecting what it cannot rewrite in `items` and the parts it
    made in `record`."""

    def __init__(self, model: schema.ModelProto, record: SequenceParts) -> None:
        self.model = model
        self.record = record
        self.opset = opset_version(model) or 11
        self.taken = all_names(model.graph)
        self.info = _tensor_info(model)
        self.items: list[UnsupportedItem] = []

    def _scratch(self) -> SequenceLowering:
        """A lowering for a trial run: its own names, ranks, refusals and record."""
        trial = copy.copy(self)
        trial.taken, trial.info, trial.items = set(self.taken), self.info.copy(), []
        trial.record = SequenceParts()
        return trial

    def _refuse(self, node: schema.NodeProto, path: str, reason: str) -> None:
        opset = opset_version(self.model, node.domain)
        self.items.append(UnsupportedItem(node.op_type, node.domain, opset, path, reason))

    def _refuse_value(self, path: str, reason: str) -> None:
        """Refuse a graph input or output (`path` ends with its name)."""
        self.items.append(UnsupportedItem("value", "graph", None, path, reason))

    def _emit(self, nodes, hint: str) -> Emit:
        return Emit(nodes, self.taken, self.opset, hint)

    # -- graphs ----------------------------------------------------------------------------
    def main(self, graph: schema.GraphProto) -> None:
        """The model's graph: its sequence inputs and outputs become their parts."""
        scope: Scope = {}
        inputs = []
        for value in graph.input:
            kind = kind_of(value.type)
            if kind in (TENSOR, None):
                inputs.append(value)
                continue
            if not self._representable(kind, f"main/{value.name}"):
                continue
            names = part_names(value.name, kind, self.taken)
            elem_type = element_type(value.type).tensor_type.elem_type
            entry = (
                kind,
                declared_rank(value.type),
                elem_type,
                None,
            )  # no dims declared are trusted
            made = _sequence_of(names, entry, elem_type)
            scope[value.name] = made
            self.record.inputs.append((kind, made.names()))
            inputs.extend(part_infos(made))
        del graph.input[:]
        graph.input.extend(inputs)
        self.rewrite(graph, scope, "main")
        outputs = []
        for value in graph.output:
            found = scope.get(value.name)
            if found is None:
                outputs.append(value)
                continue
            declared = kind_of(value.type)
            kind = declared if declared in (SEQUENCE, OPTIONAL, OPTIONAL_SEQUENCE) else found.kind
            made = as_kind(self._emit(graph.node, value.name), found, kind)
            if made.present is not None and made.present != found.present:
                graph.node.append(helpers.make_node("Identity", [made.present],
                                  [fresh_name(value.name + ".present", self.taken)]))  # fmt: skip
                made = made.renamed((*made.names()[:4], graph.node[-1].output[0]))
            outputs.extend(part_infos(made))
        del graph.output[:]
        graph.output.extend(outputs)

    def _representable(self, kind: str, path: str) -> bool:
        """Whether a value of `kind` has a tensor form; refuses it (at `path`) if not."""
        if kind in (SEQUENCE, OPTIONAL, OPTIONAL_SEQUENCE):
            return True
        self._refuse_value(path, f"a {kind} value has no tensor form")
        return False

    def rewrite(self, graph: schema.GraphProto, scope: Scope, path: str) -> None:
        """Rewrite `graph`'s nodes in place; `scope` holds the sequences it sees by name (its
        own are added)."""
        nodes: list[schema.NodeProto] = []
        for index, node in enumerate(list(graph.node)):
            self._node(node, scope, f"{path}/{node_label(node, index)}", nodes)
        del graph.node[:]
        graph.node.extend(nodes)
        kept = [info for info in graph.value_info if kind_of(info.type) in (TENSOR, None)]
        del graph.value_info[:]
        graph.value_info.extend(kept)

    def _node(self, node: schema.NodeProto, scope: Scope, path: str, nodes: list) -> None:
        standard = node.domain in STANDARD
        if standard and node.op_type in HANDLERS:
            e = self._emit(nodes, node.output[0] if node.output else node.op_type)
            reason = HANDLERS[node.op_type](node, scope, e, self.info)
            if reason:
                self._refuse(node, path, reason)
        elif is_loop(node):
            self._loop(node, scope, path, nodes)
        elif standard and node.op_type == "If":
            self._if(node, scope, path, nodes)
        else:
            for attr_name, body in subgraphs(node):
                self.rewrite(body, dict(scope), f"{path}/{attr_name}")
            if any(name in scope for name in node.input):
                self._refuse(node, path, "takes a sequence or optional value; no rewrite for it")
            propagate_rank(node, self.info)
            nodes.append(node)

    # -- Loop ------------------------------------------------------------------------------
    def _loop(self, node: schema.NodeProto, scope: Scope, path: str, nodes: list) -> None:
        body = next(attr.g for attr in node.attribute if attr.name == "body")
        carried = list(node.input[2:])
        plan = [_plan_of(scope.get(name)) for name in carried]
        for _ in range(_WIDENINGS):  # ranks and dims only widen: empty -> known -> unknown
            trial = schema.GraphProto()
            trial.CopyFrom(body)
            outputs = self._scratch()._body(trial, scope, plan, path)
            widened = [_widen_plan(entry, out) for entry, out in zip(plan, outputs)]
            if widened == plan:
                break
            plan = widened
        else:  # no fixed point of the dims: claim none
            plan = [entry and (*entry[:3], None) for entry in plan]
        self._body(body, scope, plan, path)
        e = self._emit(nodes, node.name or "loop")
        inputs = list(node.input[:2])
        for name, entry in zip(carried, plan):
            inputs.extend([name] if entry is None else as_kind(e, scope[name], entry[0]).names())
        outputs = []
        for index, name in enumerate(node.output):
            entry = plan[index] if index < len(plan) else None
            if entry is None:
                outputs.append(name)
                continue
            outputs.extend(self._outer(scope, name, entry))
        del node.input[:], node.output[:]
        node.input.extend(inputs)
        node.output.extend(outputs)
        nodes.append(node)

    def _body(self, body: schema.GraphProto, scope: Scope, plan: Plan, path: str) -> list:
        """Rewrite a Loop body carrying sequences as `plan` says; the sequences its carried
        outputs are (None for tensors)."""
        inner = dict(scope)
        inputs = list(body.input[:2])
        carried = [value.name for value in body.input[2:]]
        for value, entry in zip(body.input[2:], plan):
            if entry is None:
                inputs.append(value)
                continue
            elem_type = entry[2] or element_type(value.type).tensor_type.elem_type
            made = _sequence_of(part_names(value.name, entry[0], self.taken), entry, elem_type)
            inner[value.name] = made
            self.record.carried[made.names()] = entry[0]
            inputs.extend(part_infos(made))
        del body.input[:]
        body.input.extend(inputs)
        self.rewrite(body, inner, f"{path}/body")
        found = [inner.get(value.name) for value in body.output[1 : 1 + len(plan)]]
        for value, entry, name in zip(body.output[1:], plan, carried):
            if entry is not None and entry[0] == OPTIONAL and value.name in inner:
                e = self._emit(body.node, value.name)
                inner[value.name] = _unbounded(e, inner[value.name], inner[name])
        kinds = [entry and entry[0] for entry in plan]
        self._set_outputs(body, inner, kinds, first=1, path=f"{path}/body")
        return found

    def _set_outputs(self, graph, inner: Scope, kinds: list, first: int, path: str) -> None:
        """Graph outputs from `first` on, each of kinds[k] not None, become its parts (fresh
        Identities of the value as that kind)."""
        outputs = list(graph.output[:first])
        for index, value in enumerate(graph.output[first:]):
            kind = kinds[index] if index < len(kinds) else None
            found = inner.get(value.name)
            if kind is None or found is None:
                if found is not None or kind is not None:
                    reason = "a sequence in one place, a tensor in another"
                    self._refuse_value(f"{path}/{value.name}", reason)
                outputs.append(value)
                continue
            e = self._emit(graph.node, value.name)
            made = as_kind(e, found, kind)
            parts = part_names(fresh_name(value.name + ".out", self.taken), kind, self.taken)
            for source, target in zip(made.names(), parts):
                e.op("Identity", [source], out=target)
            outputs.extend(part_infos(made.renamed(parts)))
        del graph.output[:]
        graph.output.extend(outputs)

    def _join_tensor_info(self, name: str, then_out: str, else_out: str) -> None:
        """Record what both branches' outputs tell of an If's tensor output `name`."""
        if name in self.info and self.info[name][1] is not None:
            return
        found = [self.info.get(out, (0, None)) for out in (then_out, else_out)]
        self.info[name] = (found[0][0] or found[1][0], join_ranks(found[0][1], found[1][1]))

    def _outer(self, scope: Scope, name: str, entry) -> tuple[str, ...]:
        """The parts of the sequence output `name` of a Loop or If, as its plan `entry` says."""
        made = _sequence_of(part_names(name, entry[0], self.taken), entry, entry[2])
        scope[name] = made
        return made.names()

    # -- If --------------------------------------------------------------------------------
    def _if(self, node: schema.NodeProto, scope: Scope, path: str, nodes: list) -> None:
        branches = [(attr.name, attr.g) for attr in node.attribute if attr.type == attr.GRAPH]
        found = []
        for attr_name, branch in branches:
            inner = dict(scope)
            self.rewrite(branch, inner, f"{path}/{attr_name}")
            found.append((inner, [inner.get(value.name) for value in branch.output]))
        plan = [_widen_plan(_plan_of(a), b) for a, b in zip(found[0][1], found[1][1])]
        for (attr_name, branch), (inner, _) in zip(branches, found):
            kinds = [entry and entry[0] for entry in plan]
            self._set_outputs(branch, inner, kinds, first=0, path=f"{path}/{attr_name}")
        outputs = []
        branch_outputs = zip(node.output, branches[0][1].output, branches[1][1].output)
        for (name, then_out, else_out), entry in zip(branch_outputs, plan):
            if entry is None:
                self._join_tensor_info(name, then_out.name, else_out.name)
                outputs.append(name)
                continue
            outputs.extend(self._outer(scope, name, entry))
        del node.output[:]
        node.output.extend(outputs)
        nodes.append(node)


def _unbounded(e: Emit, value: Sequence, previous: Sequence) -> Sequence:
    """`value` with each part given a length OpenVINO cannot bound above: part + previous
    part[len:] (nothing). A body making an Optional of a tensor returns parts of static length
    (1 or 0) that the loop entered with another length, which the CPU plugin cannot run when the
    loop runs zero times (passes/zero_run_carry.py); an unbounded length runs."""
    parts = []
    for part, old in zip(value.names()[:4], previous.names()[:4]):
        rest = e.slice(old, e.size(old))
        parts.append(e.concat([part, rest]))
    return value.renamed((*parts, *value.names()[4:]))


def _sequence_of(names: tuple[str, ...], entry: tuple, elem_type: int) -> Sequence:
    """The sequence of parts `names` a plan entry (kind, rank, _, dims) describes."""
    kind, rank, _, dims = entry
    present = names[4] if kind == OPTIONAL_SEQUENCE else None
    return Sequence(*names[:4], elem_type, rank, present=present, optional=kind == OPTIONAL,
                    dims=dims)  # fmt: skip


def _plan_of(value: Sequence | None):
    return None if value is None else (value.kind, value.rank, value.elem_type, value.dims)


def _widen_plan(entry, value: Sequence | None):
    """The plan entry for a value that is either as `entry` says or `value`."""
    if entry is None:
        return None
    return widen(_sequence_of(("",) * 5, entry, entry[2]), value)
