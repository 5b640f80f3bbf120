"""Pass: computation that is the same in every iteration leaves the body (loop-invariant code
motion)."""

from __future__ import annotations

import openvino as ov
import openvino.opset15 as ops

from ov_loops import ovgraph
from ov_loops.contract import ports
from ov_loops.contract.spec import InvariantInput
from ov_loops.loopir.analysis import unread_parameters
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.loopir.plugin_limits import MAX_PORT_RANK

# Ops that stay in the body whatever they read: bodies of their own (nested loops), state and
# randomness (a different value per iteration), and ShapeOf: the plugin folds it when shapes are
# static, hoisted it would turn a static shape into a runtime Parameter and the body dynamic.
STAYS = {
    "Loop",
    "TensorIterator",
    "If",
    "ReadValue",
    "Assign",
    "RandomUniform",
    "Multinomial",
    "ShapeOf",
    "Parameter",
    "Result",
}
VARIANT, CONSTANT, INVARIANT = "variant", "constant", "invariant"


class HoistInvariantComputation(LoopPass):
    """Compute each body node that reads only invariant inputs and constants, and at least one
    invariant input (directly or through such nodes), once before the Loop::

        hoisted = nodes whose inputs are invariant Parameters, Constants, constant-only nodes
                  or hoisted nodes, with an invariant Parameter among their ancestors
        for value in outputs of hoisted read by a node that stays:
            outer: a copy of value's subgraph fed the Parameters' outer values
            body:  value's readers read a new invariant input fed that copy
        drop the invariant inputs nothing reads any more

    A subgraph of constants alone stays: the CPU plugin folds it and pre-packs constant MatMul
    weights, which an invariant input would lose. Ops in STAYS never move, nor does a node
    whose value would make an input the CPU plugin cannot run (a dynamic rank or one above
    MAX_PORT_RANK). The hoisted values are computed even when the loop runs zero times.
    """

    name = "hoist-invariant-computation"
    level = "default"

    def run(self, loop: LoopIR) -> LoopIR:
        if not loop.spec.invariant_inputs:
            return loop  # no node reads an invariant Parameter: none is INVARIANT
        kinds, frontier = _hoisted(loop)
        if not frontier:
            return loop
        readers = [_readers_that_stay(value, kinds) for value in frontier]
        computed = _computed_outside(loop, frontier)
        parameters = list(loop.body.get_parameters())
        added = []
        for value, outside, staying in zip(frontier, computed, readers):
            parameter = ops.parameter(value.get_partial_shape(), value.get_element_type())
            parameter.set_friendly_name(f"{loop.path}/hoisted{len(added)}")
            for reader in staying:
                reader.replace_source_output(parameter.output(0))
            parameters.append(parameter)
            added.append((InvariantInput(ports.UNNUMBERED, len(parameters) - 1), outside))
        spec = loop.spec
        entries = [*spec.inputs(), *(entry for entry, _ in added)]
        first = 2 + len(spec.inputs())
        outer = dict(loop.outer) | {first + k: value for k, (_, value) in enumerate(added)}
        spec = ports.renumbered(spec, entries, spec.outputs())
        moved = loop.with_body(list(loop.body.get_results()), parameters, spec)
        moved = moved.replace(outer=outer)
        unread = unread_parameters(moved, moved.spec.invariant_inputs)
        if unread:
            moved = moved.without_parameters(unread)
        count = sum(1 for kind in kinds.values() if kind == INVARIANT)
        return moved.noting(f"moved {count} invariant ops out")


def _hoisted(loop: LoopIR) -> tuple[dict[int, str], list[ov.Output]]:
    """The body nodes' kinds (`_kinds`) and the frontier (`_frontier`), every frontier value
    fit to be a Loop-5 port: a node whose value is not stays, and its readers with it."""
    stays: set[int] = set()
    while True:
        kinds = _kinds(loop, stays)
        frontier = _frontier(loop.body, kinds)
        unfit = {value.get_node().get_instance_id() for value in frontier if not _fits(value)}
        if not unfit:
            return kinds, frontier
        stays |= unfit


def _fits(value: ov.Output) -> bool:
    """Whether `value` can be a Loop-5 port the CPU plugin runs (see lower/loop5.py): a static
    rank up to MAX_PORT_RANK."""
    rank = value.get_partial_shape().rank
    return rank.is_static and rank.get_length() <= MAX_PORT_RANK


def _kinds(loop: LoopIR, stays: set[int]) -> dict[int, str]:
    """Each body node's kind by instance id: INVARIANT (invariant Parameters and the nodes to
    hoist), CONSTANT (Constants and nodes of constants alone) or VARIANT (the nodes in `stays`
    among them)."""
    parameters = loop.body.get_parameters()
    invariant = {parameters[e.body_parameter].get_instance_id() for e in loop.spec.invariant_inputs}
    kinds: dict[int, str] = {}
    for node in loop.body.get_ordered_ops():
        key = node.get_instance_id()
        if key in invariant:
            kinds[key] = INVARIANT
        elif node.get_type_name() == "Constant":
            kinds[key] = CONSTANT
        elif key in stays or node.get_type_name() in STAYS or node.get_input_size() == 0:
            kinds[key] = VARIANT
        else:
            read = {kinds[value.get_node().get_instance_id()] for value in node.input_values()}
            kinds[key] = next(kind for kind in (VARIANT, INVARIANT, CONSTANT) if kind in read)
    for key in invariant:
        kinds.pop(key, None)  # the Parameters themselves stay
    return kinds


def _readers_that_stay(value: ov.Output, kinds: dict[int, str]) -> list[ov.Input]:
    """The inputs reading `value` whose nodes stay in the body."""
    return [
        reader
        for reader in value.get_target_inputs()
        if kinds.get(reader.get_node().get_instance_id(), VARIANT) != INVARIANT
    ]


def _frontier(body: ov.Model, kinds: dict[int, str]) -> list[ov.Output]:
    """The outputs of hoisted nodes that a node staying in the body reads, in body order."""
    return [
        output
        for node in body.get_ordered_ops()
        if kinds.get(node.get_instance_id()) == INVARIANT
        for output in node.outputs()
        if _readers_that_stay(output, kinds)
    ]


def _computed_outside(loop: LoopIR, values: list[ov.Output]) -> list[ov.Output]:
    """`values` computed before the Loop: a copy of their subgraph whose invariant Parameters
    are replaced by their outer values (the copies' tensors unnamed, their nodes named after
    the loop)."""
    parameters = loop.body.get_parameters()
    entries = loop.spec.invariant_inputs
    results = [ops.result(value) for value in values]
    subgraph = ov.Model(results, [parameters[entry.body_parameter] for entry in entries])
    copy = subgraph.clone()
    nodes = [node for node in copy.get_ordered_ops() if node.get_type_name() != "Parameter"]
    for parameter, entry in zip(copy.get_parameters(), entries):
        outer = loop.outer[entry.external_port]
        names = outer.get_names()
        parameter.output(0).replace(outer)
        outer.set_names(names)  # replace() gave it the body Parameter's names too
    for node in nodes:
        if node.get_type_name() != "Result":
            node.set_friendly_name(f"{loop.path}/{node.get_friendly_name()}")
            for output in node.outputs():
                output.set_names(set())
            node.validate_and_infer_types()
    _reuse_outer_twins(nodes)
    return [result.input_value(0) for result in copy.get_results()]


def _reuse_outer_twins(copied: list[ov.Node]) -> None:
    """Each copied node (in order) that an op of the outer graph already computes reads as
    that op instead: same type, version and attributes, the same sources (equal Constants)::

        for node in copied: if twin(node) exists: node's readers read twin

    A nested loop's guards, hoisted, are its parent's own (the same trip count): the twins
    MOC's common-subexpression elimination would merge later."""
    ours = {node.get_instance_id() for node in copied}
    for node in copied:
        if node.get_type_name() in ("Result", "Constant"):
            continue
        twin = ovgraph.twin(node, ours)
        if twin is not None:
            for output, kept in zip(node.outputs(), twin.outputs()):
                names = kept.get_names()
                output.replace(kept)
                kept.set_names(names)  # replace() gave it the copy's (empty) names
