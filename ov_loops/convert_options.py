"""The values of the conversion options `convert` and `check` share (`ConvertOptions`), spelled
back for reports; their command line is `ov_loops.cli.convert.add_convert_options`.

`check` converts with exactly what `convert` would be given, and both hand these values to
`ov_loops.api.translate`, which checks them (one validation). Nothing here imports OpenVINO:
the CLI starts light.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ov_loops.errors import InputError


@dataclass(frozen=True)
class ConvertOptions:
    """How a model is converted: `translate`'s `optimize`, `input`, `target`, `unroll`,
    `stateful`, `max_trip_count` and `save`'s `compress_to_fp16`, with their defaults."""

    optimize: str = "default"
    input: object = None
    target: str = "CPU"
    unroll: int | None = None
    stateful: bool = False
    max_trip_count: int | None = None
    compress_to_fp16: bool = True

    @classmethod
    def given(cls, values: dict[str, object]) -> ConvertOptions:
        """The options of `values` (by field name) that are not None; the others default.
        A field name that is not an option is a TypeError, a non-boolean flag an InputError."""
        given = {name: value for name, value in values.items() if value is not None}
        for flag in ("stateful", "compress_to_fp16"):
            if flag in given and not isinstance(given[flag], bool):
                raise InputError(f"{flag} must be True or False, not {given[flag]!r}")
        return cls(**given)

    def translate_keywords(self) -> dict[str, object]:
        """The keywords of `ov_loops.api.translate` (all but `compress_to_fp16`, `save`'s)."""
        keywords = dataclasses.asdict(self)
        del keywords["compress_to_fp16"]
        return keywords

    def spelled(self) -> str:
        """The options as `ov-loops convert` takes them; --input, --unroll, --stateful and
        --max_trip_count only when set: `--optimize max --target CPU --compress_to_fp16=True`."""
        words = [f"--optimize {self.optimize}"]
        if self.input is not None:
            words.append(f"--input {_input_text(self.input)}")
        words.append(f"--target {self.target}")
        if self.unroll is not None:
            words.append(f"--unroll {self.unroll}")
        if self.stateful:
            words.append("--stateful")
        if self.max_trip_count is not None:
            words.append(f"--max_trip_count {self.max_trip_count}")
        words.append(f"--compress_to_fp16={self.compress_to_fp16}")
        return " ".join(words)

    def to_dict(self) -> dict[str, object]:
        """The options as JSON values (`input` as text)."""
        values = dataclasses.asdict(self)
        values["input"] = None if self.input is None else _input_text(self.input)
        return values


def _input_text(value: object) -> str:
    """`--input` as given: the text itself, else Python's spelling of the value."""
    return value if isinstance(value, str) else repr(value)


def given_options(values: dict[str, object]) -> list[str]:
    """The options among `values` (by field name) that are set (not None), as `--name`."""
    return [f"--{name}" for name, value in values.items() if value is not None]


OPTION_NAMES = tuple(field.name for field in dataclasses.fields(ConvertOptions))
