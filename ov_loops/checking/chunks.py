"""`ov-loops check --chunks NAME[:AXIS]=N|L1,L2,...`: a stateful model fed one input in chunks.

The input NAME is split along AXIS (default 0) into N near-equal chunks (`np.array_split`) or
chunks of the lengths given (zero allowed; they sum to the input's dim); the other inputs are
fed whole on every call. The device runs the chunks in order on one infer request, then
`reset_state()` and the whole inputs once more; the reference runs once on the whole inputs.
Each output of the chunked run is compared with the reference after `combine`: the chunks'
outputs concatenated where that gives the reference's shape (a scan output), else the last
chunk's (a last value).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import openvino as ov

from ov_loops.errors import InputError

NOT_STATEFUL = "--chunks needs a stateful IR (convert with --stateful)"


@dataclass(frozen=True)
class ChunkSpec:
    """A parsed --chunks value: the input (and axis, when written NAME:AXIS) as written, and
    either a number of chunks or their lengths."""

    text: str
    target: str
    count: int | None = None
    lengths: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Chunking:
    """The chunks of one check: input `name` split along `axis` into chunks of `lengths`."""

    name: str
    axis: int
    lengths: tuple[int, ...]

    def split(self, feeds: dict) -> list[dict]:
        """The feeds of each chunk, in order: `name` sliced, the other inputs whole."""
        value, parts, start = np.asarray(feeds[self.name]), [], 0
        for length in self.lengths:
            index = [slice(None)] * value.ndim
            index[self.axis] = slice(start, start + length)
            parts.append({**feeds, self.name: np.ascontiguousarray(value[tuple(index)])})
            start += length
        return parts


def parse_chunks(text: str) -> ChunkSpec:
    """NAME[:AXIS]=N (N >= 1 near-equal chunks) or NAME[:AXIS]=L1,L2,... (lengths >= 0)."""
    target, equals, value = text.rpartition("=")
    if not equals or not target:
        raise InputError(f"--chunks {text}: expected NAME[:AXIS]=N or NAME[:AXIS]=L1,L2,...")
    items = [item.strip() for item in value.split(",")]
    try:
        numbers = [int(item) for item in items]
    except ValueError:
        raise InputError(
            f"--chunks {text}: N and the lengths must be integers, not '{value}'"
        ) from None
    if len(numbers) == 1:
        if numbers[0] < 1:
            raise InputError(f"--chunks {text}: the number of chunks must be at least 1")
        return ChunkSpec(text, target, count=numbers[0])
    if any(number < 0 for number in numbers):
        raise InputError(f"--chunks {text}: chunk lengths must not be negative")
    return ChunkSpec(text, target, lengths=tuple(numbers))


def resolve(spec: ChunkSpec, feeds: dict) -> Chunking:
    """The chunking of `spec` over the inputs `feeds`: the input it names (a name holding ':'
    is taken whole first), the axis in range, lengths that sum to the input's dim."""
    name, axis = _name_and_axis(spec, feeds)
    value = feeds[name]
    if not isinstance(value, np.ndarray):
        raise InputError(f"--chunks {spec.text}: input '{name}' is not a tensor")
    if not -value.ndim <= axis < value.ndim:
        raise InputError(
            f"--chunks {spec.text}: axis {axis} is out of range for input '{name}' of shape "
            f"{list(value.shape)}"
        )
    axis %= value.ndim
    dim = value.shape[axis]
    if spec.count is not None:
        lengths = tuple(len(part) for part in np.array_split(np.arange(dim), spec.count))
    else:
        lengths = spec.lengths
    if sum(lengths) != dim:
        raise InputError(
            f"--chunks {spec.text}: the lengths sum to {sum(lengths)}, input '{name}' has {dim} "
            f"along axis {axis}"
        )
    return Chunking(name, axis, lengths)


def require_fit(chunking: Chunking | None, model: ov.Model) -> None:
    """InputError when a chunk's length lies outside the dim the model's input takes on the
    chunks' axis (`--input` made it static or bounded): the device would refuse the chunk."""
    if chunking is None:
        return
    for port in model.inputs:
        names = port.get_names() or {port.get_node().get_friendly_name()}
        shape = port.get_partial_shape()
        if chunking.name not in names or shape.rank.is_dynamic:
            continue
        dim = shape[chunking.axis]
        low, high = dim.get_min_length(), dim.get_max_length()  # high -1: unbounded
        if any(length < low or 0 <= high < length for length in chunking.lengths):
            raise InputError(
                f"--chunks: the model's input '{chunking.name}' takes dim {dim} on axis "
                f"{chunking.axis}, not chunks of {list(chunking.lengths)}: give it a dynamic dim "
                "there (--input)"
            )


def _name_and_axis(spec: ChunkSpec, feeds: dict) -> tuple[str, int]:
    if spec.target in feeds:
        return spec.target, 0
    name, colon, axis_text = spec.target.rpartition(":")
    if colon and name in feeds:
        try:
            return name, int(axis_text)
        except ValueError:
            raise InputError(f"--chunks {spec.text}: axis must be an integer") from None
    known = ", ".join(sorted(feeds)) or "none"
    shown = name if colon and name else spec.target
    raise InputError(f"--chunks {spec.text}: the model has no input '{shown}' (inputs: {known})")


def combine(
    expected: list[np.ndarray], chunked: list[list[np.ndarray]], axis: int
) -> tuple[list[np.ndarray], list[int | None]]:
    """Each output of a chunked run as one value, and how (the axis concatenated along, None:
    the last chunk's): the chunks' outputs concatenated along `axis` (else the first other axis
    that fits) when that gives the reference's shape and the last chunk's output alone does
    not; else the last chunk's output. Empty chunk outputs are skipped when concatenating."""
    values, joined_along = [], []
    for index, want in enumerate(expected):
        parts = [np.asarray(outputs[index]) for outputs in chunked]
        value, along = _combined(np.shape(want), parts, axis)
        values.append(value)
        joined_along.append(along)
    return values, joined_along


def _combined(shape: tuple, parts: list[np.ndarray], axis: int) -> tuple[np.ndarray, int | None]:
    last = parts[-1]
    if last.shape == shape or len(parts) == 1:
        return last, None
    kept = [part for part in parts if part.size > 0] or parts[-1:]
    for candidate in dict.fromkeys([axis, *range(len(shape))]):
        if candidate >= len(shape) or any(part.ndim != len(shape) for part in kept):
            continue
        try:
            joined = np.concatenate(kept, axis=candidate)
        except ValueError:  # the other dims differ along this axis
            continue
        if joined.shape == shape:
            return joined, candidate
    return last, None


def describe(chunking: Chunking, names: list[str], joined_along: list[int | None]) -> dict:
    """The report's account of the chunks (`CheckReport.chunks`)."""
    return {
        "input": chunking.name,
        "axis": chunking.axis,
        "lengths": list(chunking.lengths),
        "outputs": {
            name: "last chunk" if along is None else f"concatenated along axis {along}"
            for name, along in zip(names, joined_along)
        },
    }
