"""The options of `ov-loops convert` alone (where the IR goes, the output cut), and `--version`.

cli.py adds them with `add_ovc_options` and reads them back with the functions below (the
conversion options `check` shares are `convert_options.py`'s); the
conversion itself is ov_loops.api's. Nothing here imports OpenVINO at module level: the CLI
starts light.
"""

from __future__ import annotations

import argparse
import os
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING

from ov_loops.errors import InputError

if TYPE_CHECKING:
    import openvino as ov


def version_line() -> str:
    """`ov-loops X (OpenVINO Y, onnx Z)`: the versions that decide what a conversion gives."""
    import ov_loops

    found = []
    for name, distribution in (("OpenVINO", "openvino"), ("onnx", "onnx")):
        try:
            found.append(f"{name} {version(distribution)}")
        except PackageNotFoundError:
            found.append(f"{name} not installed")
    return f"ov-loops {ov_loops.__version__} ({', '.join(found)})"


def add_version(parser: argparse.ArgumentParser) -> None:
    """`--version`: print version_line() and exit 0."""
    parser.add_argument(
        "--version", action="version", version=version_line(), help="print the versions and exit"
    )


def add_ovc_options(convert: argparse.ArgumentParser) -> None:
    """The options of `ov-loops convert` alone: where the IR goes (-o, spelled as `ovc` spells
    it, hyphens accepted too; --layout) and ovc's --output cut; the conversion options `check`
    shares are `convert_options.add_convert_options`'s."""
    convert.add_argument(
        "-o",
        "--output_model",
        "--output-model",
        dest="output_model",
        metavar="OUT",
        help="the IR to write: OUT.xml (.bin beside), or a directory (an existing one, or one "
        "ending in /) to write MODEL's name .xml in; missing directories are created "
        "(default: MODEL's name .xml in the current directory)",
    )
    convert.add_argument(
        "--output",
        metavar="NAMES",
        help="comma-separated main-graph tensors to make the model's outputs (cut there)",
    )
    convert.add_argument(
        "--layout",
        choices=("ir", "ovms"),
        default="ir",
        help="ovms: write an OpenVINO Model Server repository, -o DIR/NAME/1/model.xml (NAME: "
        "the model's file name) and DIR/config.json listing it (default ir: the .xml itself)",
    )


def output_path(args: argparse.Namespace) -> Path:
    """Where the IR goes: `-o` itself (.xml), or MODEL's name .xml in the directory `-o` names
    (an existing one, or one ending in a separator) or in the current directory. `--output` is
    ovc's output cut: an IR path there (the old long form of -o) is refused."""
    model, given = args.model, args.output_model
    if args.output is not None and args.output.endswith(".xml"):
        raise InputError(
            f"--output {args.output}: --output names tensors to cut the model at (as in ovc); "
            "the IR's path is -o / --output_model"
        )
    if given is None:
        return Path(Path(model).stem + ".xml")
    if Path(given).is_dir() or given.endswith(("/", os.sep)):
        return Path(given) / (Path(model).stem + ".xml")
    path = Path(given)
    if path.suffix != ".xml":
        raise InputError(f"{path}: the output path must end in .xml (or end a directory in /)")
    return path


def verbose_lines(model: ov.Model, path: Path, started: float) -> list[str]:
    """What -v adds to convert's output: the IR's inputs and outputs, each loop's ports, the
    total time."""
    from ov_loops.ir.validate import show

    lines = [f"input {_port_text(port)}" for port in model.inputs]
    lines += [f"output {_port_text(port)}" for port in model.outputs]
    lines += show(path)
    lines.append(f"total {1000 * (time.perf_counter() - started):.0f} ms")
    return lines


def _port_text(port: ov.Output) -> str:
    names = ", ".join(sorted(port.get_names())) or port.get_node().get_friendly_name()
    return f"{names}: {port.get_partial_shape()} {port.get_element_type().get_type_name()}"
