"""Kinds of loop-carried values and the physical Loop-5 ports each maps to.

A logical carried value (what a frontend's loop carries: a tensor, a sequence, an optional)
is carried by one or more merged inputs of the LoopSpec: a tensor by one, a sequence by four
consecutive ones. This registry is the one place that says how many ports each kind takes.
"""

from __future__ import annotations

from dataclasses import dataclass

TENSOR = "tensor"
# A sequence: buffer, sizes, ranks, shapes (frontends/onnx/rewrites/sequences/sequence_ops.py); an
# Optional of a tensor is a sequence of zero or one element; an Optional of a sequence adds a
# `present` flag.
SEQUENCE, OPTIONAL, OPTIONAL_SEQUENCE = "sequence", "optional", "optional_sequence"
PORTS_PER_KIND = {TENSOR: 1, SEQUENCE: 4, OPTIONAL: 4, OPTIONAL_SEQUENCE: 5}


@dataclass(frozen=True)
class CarriedValue:
    """A logical loop-carried value: its name (the outer value it starts from), its kind, and
    the positions in `LoopSpec.merged_inputs` of the merged inputs carrying it, in order."""

    name: str
    merged: tuple[int, ...]
    kind: str = TENSOR

    def __post_init__(self) -> None:
        expected = PORTS_PER_KIND.get(self.kind)
        if expected is None:
            raise ValueError(f"carried value '{self.name}': unknown kind {self.kind!r}")
        if len(self.merged) != expected:
            raise ValueError(
                f"carried value '{self.name}': a {self.kind} takes {expected} merged input(s), "
                f"got {len(self.merged)}"
            )


def tensors(names: list[str], first: int = 0) -> tuple[CarriedValue, ...]:
    """Tensor carried values for `names`, carried by merged inputs first, first + 1, ..."""
    return tuple(CarriedValue(name, (first + k,)) for k, name in enumerate(names))


def grouped(names: list[str], kinds: list[tuple[str, int]]) -> tuple[CarriedValue, ...]:
    """Carried values of the merged inputs whose outer values are `names`, in order, grouped by
    `kinds` ((kind, number of merged inputs) each); a value is named by its first input."""
    values, first = [], 0
    for kind, count in kinds:
        values.append(CarriedValue(names[first], tuple(range(first, first + count)), kind))
        first += count
    return tuple(values)
