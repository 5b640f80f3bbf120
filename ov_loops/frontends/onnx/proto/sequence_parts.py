"""The record of which tensor parts the sequence rewrite made of each sequence value
(`SequenceParts`): the rewrite fills it, the loop ops and `check` read it."""

from __future__ import annotations

from ov_loops.contract.kinds import TENSOR, CarriedKind, SequenceKind
from ov_loops.record import Record


class SequenceParts(Record):
    """What the sequence rewrite made of the values the converter and `check` must know as one:
    the parts of each sequence a Loop carries (the names of the body inputs carrying it, in
    order) and of each sequence input of the model, with their kinds. The rewritten model
    cannot say it (its parts are plain tensors); this record comes with it (PreparedModel)."""

    __slots__ = ("carried", "inputs")

    def __init__(
        self,
        carried: dict[tuple[str, ...], SequenceKind] | None = None,
        inputs: list[tuple[SequenceKind, tuple[str, ...]]] | None = None,
    ) -> None:
        self.carried = dict() if carried is None else carried
        self.inputs = list() if inputs is None else inputs

    def carried_kinds(self, body_inputs: list[str]) -> list[CarriedKind]:
        """The kind of each value carried by the Loop body inputs named `body_inputs`, in order:
        the parts of a recorded sequence are one value, any other input a tensor. (A sequence's
        parts after the first have names unique in the model, so parts of one Loop's body are
        never taken for another's.)"""
        kinds, position = [], 0
        while position < len(body_inputs):
            kind = next(
                (
                    found
                    for parts, found in self.carried.items()
                    if tuple(body_inputs[position : position + len(parts)]) == parts
                ),
                TENSOR,
            )
            kinds.append(kind)
            position += kind.ports
        return kinds
