"""`ov-loops convert`: its options (where the IR goes, the output cut; the conversion options
`check` shares, `add_convert_options`: one definition) and the call they make.

The values of the conversion options are `ov_loops.convert_options.ConvertOptions`; the
conversion itself is ov_loops.api's. Nothing here imports OpenVINO at module level: the CLI
starts light.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ov_loops.cli.output import add_output_options
from ov_loops.conversion.json_report import CONVERT_JSON_KEYS, conversion_json
from ov_loops.convert_options import OPTION_NAMES, ConvertOptions
from ov_loops.errors import InputError
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.targets import TARGET_NAMES

if TYPE_CHECKING:
    import openvino as ov

    from ov_loops.conversion.report import Conversion
    from ov_loops.staging import Place


def add_arguments(convert: argparse.ArgumentParser) -> None:
    """The arguments of `ov-loops convert` (cli/main.py lists the command)."""
    convert.add_argument("model", help="the ONNX model (.onnx)")
    add_ovc_options(convert)
    add_layout_options(convert)
    add_convert_options(convert)
    add_output_options(convert, CONVERT_JSON_KEYS)
    convert.set_defaults(run=run)


def add_ovc_options(convert: argparse.ArgumentParser) -> None:
    """The options of `ov-loops convert` alone: where the IR goes (-o, spelled as `ovc` spells
    it, hyphens accepted too) and ovc's --output cut; the conversion options `check`
    shares are `add_convert_options`'s."""
    convert.add_argument(
        "-o",
        "--output_model",
        "--output-model",
        dest="output_model",
        metavar="OUT",
        help="the IR to write: OUT.xml (.bin beside; .xml appended when OUT does not end in "
        "it, as ovc does), or a directory (an existing one, or one ending in /) to write "
        "MODEL's name .xml in; missing directories are created (default: MODEL's name .xml in "
        "the current directory); with --layout ovms the repository's directory",
    )
    convert.add_argument(
        "--output",
        metavar="NAMES",
        help="comma-separated main-graph tensors to make the model's outputs (cut there)",
    )


def add_layout_options(convert: argparse.ArgumentParser) -> None:
    """--layout and the options of an OVMS repository (--model_name, --model_version,
    --overwrite)."""
    convert.add_argument(
        "--layout",
        choices=("ir", "ovms"),
        default="ir",
        help="ovms: write a version of a model in an OpenVINO Model Server repository, "
        "-o DIR/NAME/VERSION/model.xml, and list it in DIR/config.json, merged (default ir: "
        "the .xml itself)",
    )
    convert.add_argument(
        "--model_name",
        "--model-name",
        dest="model_name",
        metavar="NAME",
        help="--layout ovms: the model's name in the repository (default: MODEL's file name)",
    )
    convert.add_argument(
        "--model_version",
        "--model-version",
        dest="model_version",
        type=int,
        metavar="N",
        help="--layout ovms: the version to write (default: the largest there + 1, or 1)",
    )
    convert.add_argument(
        "--overwrite",
        action="store_true",
        help="--layout ovms: replace the version if it exists (else refused)",
    )


def flag(value: str) -> bool:
    """ovc's spelling of a boolean option value: True or False (any case)."""
    if value.lower() not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected True or False, not {value!r}")
    return value.lower() == "true"


def add_convert_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The conversion options `convert` and `check` share: --input, --compress_to_fp16 (spelled
    as `ovc` spells them, hyphens accepted too), --optimize; --target, --stateful, --unroll,
    --max_trip_count: what the IR is for."""
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
    parser.add_argument(
        "--target",
        choices=TARGET_NAMES,
        default="CPU",
        help="the device the IR is for: chooses lowerings and workarounds per loop; NPU "
        "refuses loops without a constant trip count and static shapes (default CPU)",
    )
    parser.add_argument(
        "--stateful",
        action="store_true",
        help="keep the carried values of the main graph's loops in OpenVINO Variables "
        "(ReadValue/Assign), so a long sequence can be fed in chunks; reset_state() restarts",
    )
    parser.add_argument(
        "--unroll",
        type=int,
        metavar="N",
        help="unroll loops of at most N iterations into straight-line graph (any target); "
        "each loop left a loop says why ('not unrolled: ...')",
    )
    parser.add_argument(
        "--max_trip_count",
        "--max-trip-count",
        dest="max_trip_count",
        type=int,
        metavar="N",
        help="loops without a trip count (while loops: they run until their condition is "
        "false) stop after N iterations at most; with static shapes NPU can then unroll them",
    )


def given_values(args: argparse.Namespace) -> dict[str, object]:
    """The values of the options `add_convert_options` parsed, by field name (None: not
    given, where the parser defaults them to None)."""
    return {name: getattr(args, name) for name in OPTION_NAMES}


def options_from(args: argparse.Namespace) -> ConvertOptions:
    """The conversion options parsed by `add_convert_options`."""
    return ConvertOptions.given(given_values(args))


def run(args: argparse.Namespace) -> int:
    """`ov-loops convert`: translate, save (an IR, or a Model Server repository), report. The
    IR is staged, the report read and the model freed before the IR is validated: validating
    costs about twice as much while the model lives (ov_loops.staging)."""
    from ov_loops.api import translate_with
    from ov_loops.staging import stage

    started = time.perf_counter()
    path = output_path(args) if args.layout == "ir" else None
    options = options_from(args)
    # the model is saved and dropped: its weights may stay in the model's files (mapped)
    conversion = translate_with(args.model, options, args.output, shares_weights=True)
    record_cli_options(conversion.model, args, options)
    with destination(args, path, conversion.model) as place:
        staged = stage(conversion.model, place.scratch_xml, options.compress_to_fp16, owned=True)
        lines, translated = report_lines(conversion, place.path, args), len(conversion.loops)
        del conversion  # the last reference to the model (tests/test_save_validation.py)
        path = place.commit(staged)
    if args.format == "text":
        if args.verbose:
            from ov_loops.ir.validate import show

            lines += show(path) + [f"total {1000 * (time.perf_counter() - started):.0f} ms"]
        lines.append(f"wrote {path} ({translated} loop(s) translated)")
    print("\n".join(lines))
    return 0


def destination(args: argparse.Namespace, path: Path | None, model: ov.Model) -> Place:
    """Where convert writes: the IR at `path` (--layout ir), or a version in a Model Server
    repository (--layout ovms; `model` says whether it is stateful)."""
    from ov_loops.staging import IRPlace

    if args.layout == "ir":
        return IRPlace(path)
    from ov_loops.serving.repository import VersionPlace

    return VersionPlace(
        Path(args.output_model or "."),
        args.model_name or Path(args.model).stem,
        bool(model.get_variables()),
        args.model_version,
        args.overwrite,
    )


def report_lines(conversion: Conversion, path: Path, args: argparse.Namespace) -> list[str]:
    """What convert prints, read from the conversion while it lives: its JSON report (--format
    json), or each loop's summary line, each recurrent op's states and, with -v, the IR's
    inputs and outputs."""
    if args.format == "json":
        return [conversion_json(conversion, path)]
    lines = [loop.summary() for loop in conversion.loops] + conversion.recurrent_ops
    if args.verbose:
        model = conversion.model
        lines += [f"input {_port_text(port)}" for port in model.inputs]
        lines += [f"output {_port_text(port)}" for port in model.outputs]
    return lines


def output_path(args: argparse.Namespace) -> Path:
    """Where the IR goes: `-o` itself (.xml), or MODEL's name .xml in the directory `-o` names
    (an existing one, or one ending in a separator) or in the current directory. `--output` is
    ovc's output cut: an IR path there (the old long form of -o) is refused. The OVMS
    options need --layout ovms."""
    model, given = args.model, args.output_model
    for option in ("model_name", "model_version", "overwrite"):
        if getattr(args, option) not in (None, False):
            raise InputError(f"--{option} is an option of --layout ovms (a model repository)")
    if args.output is not None and args.output.endswith(".xml"):
        raise InputError(
            f"--output {args.output}: --output names tensors to cut the model at (as in ovc); "
            "the IR's path is -o / --output_model"
        )
    if given is None:
        return Path(Path(model).stem + ".xml")
    if Path(given).is_dir() or given.endswith(("/", os.sep)):
        return Path(given) / (Path(model).stem + ".xml")
    from ov_loops.api import ir_path

    return ir_path(given)  # ovc: out -> out.xml


def record_cli_options(model: ov.Model, args: argparse.Namespace, options: ConvertOptions) -> None:
    """What ovc's command line adds to rt_info/conversion_parameters (the IR says how it was
    made): -o as given, --compress_to_fp16 when False."""
    from ov_loops.conversion.provenance import record_parameter

    if args.output_model is not None:
        record_parameter(model, "output_model", args.output_model)
    if not options.compress_to_fp16:
        record_parameter(model, "compress_to_fp16", False)


def _port_text(port: ov.Output) -> str:
    names = ", ".join(sorted(port.get_names())) or port.get_node().get_friendly_name()
    return f"{names}: {port.get_partial_shape()} {port.get_element_type().get_type_name()}"
