"""What a conversion returns: the model and, per ONNX loop, what became of it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import openvino as ov

from ov_loops.contract.spec import LoopSpec
from ov_loops.loopir.read_back import spec_of
from ov_loops.lower.loop5 import REMAINDER


@dataclass(frozen=True)
class ConvertedLoop:
    """What became of one ONNX loop: its node path and LoopSpec, or why it was folded away.

    `outputs` are the ONNX node's output names; `carried` the outer names of its initial
    loop-carried values, in order (merged input k of the spec carries `carried[k]`);
    `optimizations` what the optimising passes did to it; `becomes` the op that computes it
    (Loop-5, or a *Sequence-5 op for a recognised cell, spec None then); `states` the Assigns
    that keep its carried values across inferences (lower/stateful.py), and `streaming` names
    them and the carried values each inference starts again; `not_unrolled` why a target that
    unrolls (--unroll, GPU, NPU) left it a loop, or why level max's unrolling left it whole
    (`op budget`); `remainder` the LoopSpec of the second Loop-5 of a loop split in two
    (lower/remainder.py: its node path is `path` + "/remainder").
    """

    path: str
    op: str
    spec: LoopSpec | None
    folded: str | None = None
    outputs: tuple[str, ...] = ()
    carried: tuple[str, ...] = ()
    optimizations: tuple[str, ...] = ()
    becomes: str = "Loop-5"
    states: tuple[ov.Node, ...] = ()  # with --stateful: the Assigns storing its carried values
    not_unrolled: str | None = None
    streaming: str | None = None
    remainder: LoopSpec | None = None

    @classmethod
    def of(cls, path: str, op: str, outputs: tuple[str, ...], lowered) -> ConvertedLoop:
        """The report of the loop at `path` (an `op` node with `outputs`) that became
        `lowered` (lower.select.Lowered)."""
        return cls(
            path,
            op,
            lowered.spec,
            lowered.folded,
            outputs,
            lowered.carried,
            lowered.applied,
            lowered.becomes,
            lowered.states,
            lowered.not_unrolled,
            lowered.streaming,
            lowered.remainder,
        )

    def summary(self) -> str:
        done = f"; optimized: {', '.join(self.optimizations)}" if self.optimizations else ""
        if self.not_unrolled is not None:
            done += f"; not unrolled: {self.not_unrolled}"
        if self.streaming is not None:
            done += f"; --stateful {self.streaming}"
        if self.folded is not None:
            return f"{self.path}: {self.op} folded ({self.folded})"
        if self.spec is None:
            return f"{self.path}: {self.op} -> {self.becomes}{done}"
        return f"{self.path}: {self.op} -> Loop-5; {self.spec.summary()}{done}"


@dataclass
class Conversion:
    """The converted model and what became of each loop, outermost first; with --stateful,
    `recurrent_ops` names the states of each RNN/GRU/LSTM op of the main graph
    (lower/stateful_ops.py)."""

    model: ov.Model
    loops: list[ConvertedLoop] = field(default_factory=list)
    recurrent_ops: list[str] = field(default_factory=list)


def rederived(loops: list[ConvertedLoop], loop_nodes: Iterable[ov.Node]) -> list[ConvertedLoop]:
    """`loops` with each LoopSpec read again from the Loop node it became (by its
    `ov_loops_path`, in nesting order) among `loop_nodes` (every Loop node of the model, outer
    before inner), after transformations of the whole model that may prune or renumber ports;
    a loop whose node is gone is reported as removed."""
    nodes: dict[str, list[ov.Node]] = {}
    for node in loop_nodes:
        if "ov_loops_path" not in node.get_rt_info():
            continue
        path = node.get_rt_info()["ov_loops_path"].astype(str)
        nodes.setdefault(path, []).append(node)
    updated = []
    for loop in loops:
        if loop.spec is not None:
            remaining = nodes.get(loop.path, [])
            if remaining:
                loop = replace(loop, spec=spec_of(remaining.pop(0)))
            else:
                loop = replace(loop, spec=None, folded="removed: nothing reads its outputs")
        if loop.remainder is not None:
            second = nodes.get(f"{loop.path}{REMAINDER}", [])
            loop = replace(loop, remainder=spec_of(second.pop(0)) if second else None)
        updated.append(loop)
    return updated
