"""The conversion options `convert` and `check` share: their one command-line definition
(`add_convert_options`) and their values (`ConvertOptions`), spelled back for reports.

`check` converts with exactly what `convert` would be given, so both subcommands add these
options here, and both hand them to `ov_loops.api.translate`, which checks them (one
validation). Nothing here imports OpenVINO: the CLI starts light.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

from ov_loops.errors import InputError
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.targets import add_target_arguments


@dataclass(frozen=True)
class ConvertOptions:
    """How a model is converted: `translate`'s `optimize`, `input`, `target`, `unroll`,
    `stateful` and `save`'s `compress_to_fp16`, with their defaults."""

    optimize: str = "default"
    input: object = None
    target: str = "CPU"
    unroll: int | None = None
    stateful: bool = False
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
        """The options as `ov-loops convert` takes them; --input, --unroll and --stateful only
        when set: `--optimize max --target CPU --compress_to_fp16=True`."""
        words = [f"--optimize {self.optimize}"]
        if self.input is not None:
            words.append(f"--input {_input_text(self.input)}")
        words.append(f"--target {self.target}")
        if self.unroll is not None:
            words.append(f"--unroll {self.unroll}")
        if self.stateful:
            words.append("--stateful")
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


def flag(value: str) -> bool:
    """ovc's spelling of a boolean option value: True or False (any case)."""
    if value.lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected True or False, not {value!r}")
    return value.lower() == "true"


def add_convert_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--input, --compress_to_fp16 (spelled as `ovc` spells them, hyphens accepted too),
    --optimize, and --target, --stateful, --unroll (`targets.add_target_arguments`)."""
    parser.add_argument(
        "--input",
        metavar="INPUTS",
        help='shapes and element types of inputs, as ovc takes them: "X[1,?,16]{f32},h0[1,16]" '
        "(dims: N, ? or -1, A..B; [] a scalar; unnamed entries go by position; a type other "
        "than the model's is converted to the model's where the input enters)",
    )
    parser.add_argument(
        "--compress_to_fp16",
        "--compress-to-fp16",
        dest="compress_to_fp16",
        nargs="?",
        const=True,
        default=True,
        type=flag,
        metavar="True|False",
        help="store f32 weights as f16 in the .bin (default True, as ovc); "
        "--compress_to_fp16=False keeps them f32",
    )
    parser.add_argument(
        "--optimize",
        choices=OPTIMIZE_LEVELS,
        default="default",
        help="loop optimisations: none (workarounds only), default, max (default: default)",
    )
    add_target_arguments(parser)


def given_values(args: argparse.Namespace) -> dict[str, object]:
    """The values of the options `add_convert_options` parsed, by field name (None: not
    given, where the parser defaults them to None)."""
    return {name: getattr(args, name) for name in OPTION_NAMES}


def options_from(args: argparse.Namespace) -> ConvertOptions:
    """The conversion options parsed by `add_convert_options`."""
    return ConvertOptions.given(given_values(args))


OPTION_NAMES = tuple(field.name for field in dataclasses.fields(ConvertOptions))
