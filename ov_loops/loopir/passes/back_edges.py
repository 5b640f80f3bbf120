"""Pass: the back edges whose memory the CPU plugin may share carry a computed copy."""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass
from ov_loops.opfactory import op

# Ops whose output the CPU plugin never places in an input's memory: a path back from a back
# edge's value stops at them. Only MatMul is backed by the experiments below.
FRESH_OUTPUT_TYPES = frozenset({"MatMul"})


def may_share_a_slice(value: ov.Output, sliced: set[ov.Node]) -> bool:
    """Whether a path back from `value`, through any op but those of FRESH_OUTPUT_TYPES,
    reaches one of the `sliced` Parameters (the per-iteration parts of sliced inputs)."""
    seen: set[ov.Node] = set()
    pending = [value.get_node()]
    while pending:
        node = pending.pop()
        if node in sliced:
            return True
        if node in seen or node.get_type_name() in FRESH_OUTPUT_TYPES:
            continue
        seen.add(node)
        pending.extend(source.get_node() for source in node.input_values())
    return False


def is_a_view_of_a_parameter(value: ov.Output) -> bool:
    """Whether `value` is computed from one body Parameter by ops that each read one value
    besides Constants (Reshape, Squeeze, Convert, x*1, Gather(x, const), Tanh ...): whatever the
    plugin makes a view of (or the Parameter itself, another carried value's)."""
    node = value.get_node()
    while node.get_type_name() != "Parameter":
        sources = [
            source.get_node()
            for source in node.input_values()
            if source.get_node().get_type_name() != "Constant"
        ]
        if len(sources) != 1 or node.get_type_name() in FRESH_OUTPUT_TYPES:
            return False
        node = sources[0]
    return True


class CopyBackEdges(LoopPass):
    """Give a back edge a computed copy (`ovgraph.copy`) when the CPU plugin may place its
    value in memory that changes before the next iteration reads it (a CPU workaround)::

        for merged in merged_inputs:
            value = results[merged.body_result]
            if value is not parameters[merged.body_parameter] and (
                is_a_view_of_a_parameter(value) or may_share_a_slice(value, sliced_parameters)
            ):
                results[merged.body_result] = Result(copy(value))

    The rule (CPU plugin, OpenVINO 2026.4.1): copy when

    - a path back from the value through ops other than MatMul reaches a sliced input's
      Parameter: the plugin makes a view of the part (Squeeze, Reshape, Identity, Convert, x*1,
      x+0, Broadcast, Gather, Slice) and writes an elementwise chain reading it (`acc + x_t * w`,
      even under a Tanh) in place into the part's memory, which the next slice overwrites before
      the body reads the carried value; or
    - the value is another Parameter (swapped carried values came out unchanged), or computed
      from one Parameter by ops reading one non-Constant value each (what the plugin may turn
      into a view of it).

    Everything else keeps its back edge uncopied: values computed from carried values and
    invariants only (`tanh(acc * w)`, `acc + acc2`), and values behind a MatMul (the RNN cell
    `tanh(x_t W + h R + b)`: about 2-4% of its step was the copy).

    Evidence (benchmarks/back_edge_aliasing.py: random Loop and Scan bodies with 1-3 carried
    values, views of sliced parts, of carried values and of invariants, elementwise and MatMul
    steps, swaps, and test_random_bodies' bodies; four inferences in a row on one compiled
    model, a zero-trip one among them for Loops; against the numpy reference): 2217 bodies, none
    wrong with this rule or with a copy on every back edge; with no copy 477 of 2160 came out
    wrong (57 more failed to convert: MOC's EliminateLoopInputsOutputs threw on swapped
    Parameters); copying only Parameters (not their views) and chains to a slice left 2 wrong,
    the first 692 bodies showed every narrower rule tried wrong (views of the slice only: 5,
    chains to the slice only: 36, a view or an op reading a Parameter: 1).
    Last-value outputs reading a copied Result read the copy (the same value).
    """

    name = "copy-back-edges"

    @staticmethod
    def needs_copy(value: ov.Output, loop: LoopIR) -> bool:
        """Whether the back edge carrying `value` (not its own Parameter) needs a copy."""
        parameters = loop.body.get_parameters()
        sliced = {parameters[entry.body_parameter] for entry in loop.spec.sliced_inputs}
        return is_a_view_of_a_parameter(value) or may_share_a_slice(value, sliced)

    def run(self, loop: LoopIR) -> LoopIR:
        parameters = loop.body.get_parameters()
        results = list(loop.body.get_results())
        copied = 0
        for merged in loop.spec.merged_inputs:
            value = results[merged.body_result].input_value(0)
            unchanged = value.get_node() == parameters[merged.body_parameter]
            if not unchanged and self.needs_copy(value, loop):
                results[merged.body_result] = op("Result", ovgraph.copy(value))
                copied += 1
        return loop.with_body(results, list(parameters)) if copied else loop
