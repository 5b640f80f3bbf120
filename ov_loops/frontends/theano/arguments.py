"""What the arguments of `scan` say: its sequences and their taps, its outputs_info (initial
states and taps), values as OpenVINO Outputs, and BuilderError for an argument that cannot be
built."""

from __future__ import annotations

from dataclasses import dataclass, field

import openvino as ov

from ov_loops.errors import OvLoopsError


class BuilderError(OvLoopsError):
    """A `scan` call that cannot be built: the message names the argument."""


@dataclass
class SequenceInfo:
    """One entry of `sequences`: the value scanned along axis 0 and the taps fn reads."""

    value: ov.Output
    taps: list[int]


@dataclass
class OutputInfo:
    """One entry of `outputs_info`: the initial state (None for an output not fed back), the
    (negative) taps of past values fn reads, and whether only its value after the last step is
    returned (reduce's outputs; the final state of a carry another frontend keeps no trace of)."""

    initial: ov.Output | None
    taps: list[int] = field(default_factory=list)
    last: bool = False

    @property
    def window(self) -> int:
        """How many past values fn sees (0 for an output not fed back)."""
        return -min(self.taps) if self.taps else 0

    @property
    def is_window(self) -> bool:
        """Fed back with taps other than the plain [-1]: carried as a window of past values."""
        return self.taps != [-1]


def as_output(value) -> ov.Output:
    """`value` (an Output, a Node or an object with `output`) as an Output."""
    if isinstance(value, ov.Output):
        return value
    if isinstance(value, ov.Node):
        return value.output(0)
    if hasattr(value, "output"):
        return value.output(0)
    raise BuilderError(f"expected an openvino Output or Node, got {type(value).__name__}")


def as_list(value) -> list:
    """None as [], a list or tuple as a list, anything else as a list of itself."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def parse_sequences(sequences) -> list[SequenceInfo]:
    """`sequences`: values (tap 0) or dicts {"input": value, "taps": [k, ...]}."""
    parsed = []
    for index, entry in enumerate(as_list(sequences)):
        if isinstance(entry, dict):
            if "input" not in entry:
                raise BuilderError(f"sequences[{index}]: a dict needs 'input'")
            taps = entry.get("taps", [0])
            taps = [0] if taps is None else as_list(taps)
            parsed.append(SequenceInfo(as_output(entry["input"]), [int(k) for k in taps]))
        else:
            parsed.append(SequenceInfo(as_output(entry), [0]))
    return parsed


def parse_outputs_info(outputs_info) -> list[OutputInfo]:
    """`outputs_info`: None (not fed back), an initial state (tap -1), a dict {"initial":
    value, "taps": [negative k, ...]}, or an OutputInfo as it is."""
    parsed = []
    for index, entry in enumerate(as_list(outputs_info)):
        if isinstance(entry, OutputInfo):
            parsed.append(entry)
        elif entry is None:
            parsed.append(OutputInfo(None))
        elif isinstance(entry, dict):
            initial = entry.get("initial")
            taps = entry.get("taps", [-1] if initial is not None else None)
            taps = [int(k) for k in as_list(taps)]
            if taps and initial is None:
                raise BuilderError(f"outputs_info[{index}]: taps {taps} need an 'initial' state")
            if any(k >= 0 for k in taps):
                raise BuilderError(
                    f"outputs_info[{index}]: output taps must be negative, got {taps}"
                )
            parsed.append(OutputInfo(as_output(initial) if initial is not None else None, taps))
        else:
            parsed.append(OutputInfo(as_output(entry), [-1]))
    return parsed
