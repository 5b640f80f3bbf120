"""The options of `ov-loops convert` that `ovc` users know, and `--version`.

cli.py adds them with `add_ovc_options` and reads them back with the functions below; the
conversion itself is ov_loops.api's.
"""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version


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
