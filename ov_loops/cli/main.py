"""The `ov-loops` command line: its parser, `--version`, and `main`, which runs a subcommand
(convert, validate, check; cli/convert.py, validate.py, check.py), each a thin layer over the
Python API (`ov_loops.api`, `ov_loops.ir.validate`, `ov_loops.checking`).

Exit codes: 0 success; 1 the model cannot be converted (an IR the validator rejects is never
written), the IR has an error, or outputs do not match the reference; 2 unreadable or invalid
input (an ill-typed Loop or Scan port, say), an absent device, or bad usage.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from ov_loops import logs
from ov_loops.errors import OvLoopsError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"ov-loops: error: {message} (see ov-loops --help)\n")


DESCRIPTION = """\
Convert ONNX models with control flow (Loop, Scan, nested, in If branches, with lists) into
OpenVINO IR in which every loop is a Loop-5; explain every defect of the loop layers of any IR;
run a model on a device and compare it with a numpy reference, down to the first loop iteration
that diverged.

  ov-loops convert model.onnx -o out/      writes out/model.xml and out/model.bin
  ov-loops validate out/model.xml          one line per defect
  ov-loops check model.onnx                MATCH or MISMATCH, and where"""

EPILOG = """\
Exit codes: 0 success; 1 the model cannot be converted, the IR has an error, or the outputs do
not match; 2 unreadable or invalid input (an ill-typed Loop or Scan port, say), an absent
device, or bad usage. `ov-loops COMMAND --help` lists a command's options; the manual is
docs/cli.md in the ov-loops source."""


# Each command, its module (`add_arguments(parser)`, and `run` its parser's default) and its line
# in `ov-loops --help`. A run imports the module of its command alone: `ov-loops convert` loads
# nothing of `check` (its reports, the references) nor `validate`'s rules (lxml), `--help` none.
COMMANDS = {
    "convert": ("ov_loops.cli.convert", "convert an ONNX model to OpenVINO IR"),
    "validate": (
        "ov_loops.cli.validate",
        "check the Loop / TensorIterator layers of an OpenVINO IR",
    ),
    "check": (
        "ov_loops.cli.check",
        "run a model on a device and compare it with a numpy reference",
    ),
}


class _Version(argparse.Action):
    """--version: the versions line, read when asked (importlib.metadata reads the installed
    packages' metadata: 3 lookups, about 6 ms, that no other run needs)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(version_line())  # on stdout, as argparse's "version" action
        parser.exit()


def version_line() -> str:
    """`ov-loops X (OpenVINO Y, onnx Z)`: the versions that decide what a conversion gives."""
    from importlib.metadata import PackageNotFoundError, version

    from ov_loops.version import VERSION

    found = []
    for name, distribution in (("OpenVINO", "openvino"), ("onnx", "onnx")):
        try:
            found.append(f"{name} {version(distribution)}")
        except PackageNotFoundError:
            found.append(f"{name} not installed")
    return f"ov-loops {VERSION} ({', '.join(found)})"


def _parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of `argv`: every command is listed, the one `argv` names (its first word that
    is not an option) gets its arguments (its module imported)."""
    parser = _Parser(
        prog="ov-loops",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        default=argparse.SUPPRESS,
        help="print the versions and exit",
    )
    chosen = next((word for word in argv if not word.startswith("-")), None)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, (module, summary) in COMMANDS.items():
        command = commands.add_parser(name, help=summary)
        if name == chosen:
            importlib.import_module(module).add_arguments(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ov-loops` with `argv` (default: the process's arguments); returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser(argv).parse_args(argv)
    with logs.configured(args.verbose - args.quiet):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; errors become their exit codes and one line on stderr."""
    try:
        return args.run(args)
    except OvLoopsError as exc:
        print(f"ov-loops: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("ov-loops: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # stdout closed early (`| head`): stop quietly, as Python advises
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except ImportError as exc:  # a dependency is missing or broken: `validate` needs lxml alone
        package = (exc.name or "?").split(".")[0]
        print(
            f"ov-loops: error: this command needs the Python package '{package}': {exc}",
            file=sys.stderr,
        )
        return 2
