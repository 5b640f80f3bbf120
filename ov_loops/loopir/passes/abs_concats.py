"""Pass: a computed copy between a Concat that other ops read and an Abs of it (and the same
for every graph of the converted model).

OpenVINO's `AbsSinking` (src/common/transformations/.../simplify_shape_of_sub_graph.cpp, run by
MOC, so by `openvino.convert_model`, by our `simplify-body`, and by the CPU plugin when it
compiles) matches an Abs of rank 1 whose input is a Concat and rewrites the Concat itself: each
input `x` becomes `Abs(x)`, and the Abs is bypassed. It does not check that the Concat has no
other reader, so every other reader then reads `|Concat(...)|`: `ReduceMean(Concat(s, s))` of
a negative `s` flips sign (OpenVINO 2026.4.1, loops or not). No-op views between the Concat
and the Abs (Identity, a Reshape to the same shape, ...) are removed first and change nothing.
"""

from __future__ import annotations

import openvino as ov

from ov_loops import ovgraph
from ov_loops.loopir.loop import LoopIR
from ov_loops.loopir.passes.base import LoopPass

# Ops OpenVINO may remove (a no-op) before AbsSinking sees the Concat behind them.
VIEWS = {"Reshape", "Squeeze", "Unsqueeze", "Convert", "Identity"}


class CopyConcatsBeforeAbs(LoopPass):
    """Read each Abs of rank 1 (or unknown rank) whose input is, through views, a Concat that
    some other op reads too, from a computed copy (`ovgraph.copy`), in the body and in every
    body nested in it::

        for abs in body (and nested bodies):
            if rank(abs) in (1, ?) and input(abs) = views(concat) and concat is read elsewhere:
                input(abs) <- copy(input(abs))

    Runs before `simplify-body`, whose MOC would make the wrong rewrite itself.
    """

    name = "copy-concats-before-abs"

    def run(self, loop: LoopIR) -> LoopIR:
        copy_concats_before_abs(loop.body)
        return loop


def copy_concats_before_abs(model: ov.Model) -> int:
    """Give each Abs of `model`, and of every Loop and If body in it, that reads a shared
    Concat (see `CopyConcatsBeforeAbs`) a computed copy of its input; the number copied.
    An Abs reading a Concat nothing else reads is left: AbsSinking's rewrite is right there."""
    copied = 0
    for op in ovgraph.all_ops(model):
        if op.get_type_name() == "Abs" and _rank_one_or_unknown(op) and _shared_concat(op):
            op.input(0).replace_source_output(ovgraph.copy(op.input_value(0)))
            copied += 1
    return copied


def _rank_one_or_unknown(op: ov.Node) -> bool:
    rank = op.get_output_partial_shape(0).rank
    return rank.is_dynamic or rank.get_length() == 1


def _shared_concat(op: ov.Node) -> bool:
    """Whether the input of `op` is a Concat, or views of one, that another op reads too."""
    value = op.input_value(0)
    shared = False
    while True:
        shared = shared or len(value.get_target_inputs()) > 1
        node = value.get_node()
        kind = node.get_type_name()
        if kind == "Concat":
            return shared
        if kind not in VIEWS:
            return False
        value = node.input_value(0)
