"""The values of the conversion options `convert` and `check` share (`ConvertOptions`), spelled
back for reports; their command line is `ov_loops.cli.convert.add_convert_options`.

`check` converts with exactly what `convert` would be given, and both hand these values to
`ov_loops.api.translate`. The values are checked once, when the object is made; `lowering()`
gives what lowering every loop needs (`LoweringOptions`: the target's profile and the level).
Nothing here imports OpenVINO at import time: the CLI starts light.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ov_loops.errors import InputError
from ov_loops.loopir.passes.levels import OptimizeLevel, check_optimize_level
from ov_loops.targets import check_count, check_target, check_unroll

if TYPE_CHECKING:
    from ov_loops.loopir.passes.pipeline import LoweringOptions


@dataclass(frozen=True)
class ConvertOptions:
    """How a model is converted: `translate`'s `optimize`, `input`, `target`, `unroll`,
    `stateful`, `max_trip_count` and `save`'s `compress_to_fp16`, with their defaults;
    InputError naming the first wrong one when made."""

    optimize: OptimizeLevel = "default"
    input: object = None
    target: str = "CPU"
    unroll: int | None = None
    stateful: bool = False
    max_trip_count: int | None = None
    compress_to_fp16: bool = True

    @classmethod
    def given(cls, values: dict[str, object]) -> ConvertOptions:
        """The options of `values` (by field name) that are not None; the others default.
        A field name that is not an option is a TypeError."""
        return cls(**{name: value for name, value in values.items() if value is not None})

    def __post_init__(self) -> None:
        check_optimize_level(self.optimize)
        check_target(self.target)
        check_unroll(self.unroll)
        if self.max_trip_count is not None:
            check_count("max_trip_count", self.max_trip_count)
        for flag in ("stateful", "compress_to_fp16"):
            if not isinstance(getattr(self, flag), bool):
                raise InputError(f"{flag} must be True or False, not {getattr(self, flag)!r}")

    def lowering(self) -> LoweringOptions:
        """What lowering each loop needs: the target's profile (with `unroll`, `stateful` and
        `max_trip_count`) and the level."""
        from ov_loops.loopir.passes.pipeline import LoweringOptions, target_profile

        return LoweringOptions(
            target_profile(self.target, self.unroll, self.stateful, self.max_trip_count),
            self.optimize,
        )

    def translate_keywords(self) -> dict[str, object]:
        """The keywords of `ov_loops.api.translate` (all but `compress_to_fp16`, `save`'s), the
        values as given (not copied: `input` may hold OpenVINO types, which cannot be)."""
        return {name: getattr(self, name) for name in OPTION_NAMES if name != "compress_to_fp16"}

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
