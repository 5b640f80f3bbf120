"""Kinds of loop-carried values and the physical Loop-5 ports each maps to.

A logical carried value (what a frontend's loop carries: a tensor, a sequence, an optional)
is carried by one or more merged inputs of the LoopSpec. Today every kind is a tensor carried by
one merged input; a sequence will map to several (e.g. a buffer and a length), an optional to a
value and a flag. This registry is the one place that says how many ports each kind takes.
"""

from __future__ import annotations

from dataclasses import dataclass

TENSOR = "tensor"
PORTS_PER_KIND = {TENSOR: 1}


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
