"""The `ov-loops` command line: convert, validate and check, each a thin layer over the Python
API (`ov_loops.api`, `ov_loops.ir.validate`, `ov_loops.checking`).

Exit codes: 0 success; 1 the model cannot be converted (an IR the validator rejects is never
written), the IR has an error, or outputs do not match the reference; 2 unreadable or invalid
input (an ill-typed Loop or Scan port, say), an absent device, or bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ov_loops import logs
from ov_loops.cli.check import CHECK_EPILOG, add_check_options, run_check
from ov_loops.cli.convert import add_ovc_options, add_version
from ov_loops.conversion.json_report import CONVERT_JSON_KEYS, conversion_json
from ov_loops.convert_options import add_convert_options, options_from
from ov_loops.errors import OvLoopsError
from ov_loops.ir.validate import VALIDATE_JSON_KEYS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"ov-loops: error: {message} (see ov-loops --help)\n")


def _add_convert(commands) -> None:
    convert = commands.add_parser("convert", help="convert an ONNX model to OpenVINO IR")
    convert.add_argument("model", help="the ONNX model (.onnx)")
    add_ovc_options(convert)
    add_convert_options(convert)
    _add_output_options(convert, CONVERT_JSON_KEYS)
    convert.set_defaults(run=_convert)


def _add_output_options(command: argparse.ArgumentParser, json_keys: str) -> None:
    """--format, -q, -v: shared by every command."""
    command.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=f"json: one object on stdout; keys: {json_keys}",
    )
    command.add_argument(
        "-q", "--quiet", action="count", default=0, help="log errors only, no progress lines"
    )
    command.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")


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


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ov-loops",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_convert(commands)

    validate = commands.add_parser(
        "validate", help="check the Loop / TensorIterator layers of an OpenVINO IR"
    )
    validate.add_argument("model", help="the IR (.xml; .bin beside)")
    _add_output_options(validate, VALIDATE_JSON_KEYS)
    validate.add_argument(
        "--show", action="store_true", help="print each loop's structure (json: key show)"
    )
    validate.add_argument(
        "--target", choices=("GPU", "NPU"), help="also check what this device's plugin refuses"
    )
    validate.set_defaults(run=_validate)

    check = commands.add_parser(
        "check",
        help="run a model on a device and compare it with a numpy reference",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("model", help="the ONNX model (.onnx) or IR (.xml)")
    add_check_options(check)
    _add_output_options(check, "see below")
    check.set_defaults(run=_check)
    return parser


def _convert(args: argparse.Namespace) -> int:
    from ov_loops.api import save, translate
    from ov_loops.cli.convert import output_path, verbose_lines

    started = time.perf_counter()
    path = output_path(args) if args.layout == "ir" else None
    options = options_from(args)
    conversion = translate(args.model, output=args.output, **options.translate_keywords())
    if args.layout == "ovms":
        from ov_loops.serving import save_ovms

        repository = Path(args.output_model or ".")
        path = save_ovms(
            conversion.model, repository, Path(args.model).stem, options.compress_to_fp16
        )
    else:
        save(conversion.model, path, compress_to_fp16=options.compress_to_fp16)
    if args.format == "json":
        print(conversion_json(conversion, path))
        return 0
    for loop in conversion.loops:
        print(loop.summary())
    if args.verbose:
        print("\n".join(verbose_lines(conversion.model, path, started)))
    print(f"wrote {path} ({len(conversion.loops)} loop(s) translated)")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from ov_loops.ir.validate import show, validate

    report = validate(args.model, args.target)
    if args.format == "json":
        print(report.to_json(show(args.model) if args.show else None))
    else:
        if args.show:
            for line in show(args.model):
                print(line)
        for finding in report.findings:
            print(finding.text(report.path))
        print(report.summary())
    return report.exit_code


def _check(args: argparse.Namespace) -> int:
    report = run_check(args)
    print(report.to_json() if args.format == "json" else "\n".join(report.lines()))
    return report.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logs.configure(args.verbose - args.quiet)
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
