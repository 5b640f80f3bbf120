"""`ov-loops` command line, thin over the Python API.

Exit codes: 0 success; 1 the model cannot be converted, or the IR has an error; 2 unreadable
input or bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ov_loops.errors import OvLoopsError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"ov-loops: error: {message} (see ov-loops --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ov-loops", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    convert = commands.add_parser("convert", help="convert an ONNX model to OpenVINO IR")
    convert.add_argument("model", help="the ONNX model (.onnx)")
    convert.add_argument(
        "-o", "--output", required=True, help="the IR to write (.xml; .bin beside)"
    )
    convert.add_argument(
        "--compress-to-fp16", action="store_true", help="store f32 weights as f16 in the .bin"
    )
    convert.set_defaults(run=_convert)

    validate = commands.add_parser(
        "validate", help="check the Loop / TensorIterator layers of an OpenVINO IR"
    )
    validate.add_argument("model", help="the IR (.xml; .bin beside)")
    validate.add_argument("--format", choices=("text", "json"), default="text")
    validate.add_argument("--show", action="store_true", help="print each loop's structure")
    validate.set_defaults(run=_validate)
    return parser


def _convert(args: argparse.Namespace) -> int:
    import ov_loops

    conversion = ov_loops.translate(args.model)
    ov_loops.save(conversion.model, args.output, compress_to_fp16=args.compress_to_fp16)
    for loop in conversion.loops:
        print(loop.summary())
    print(f"wrote {args.output} ({len(conversion.loops)} loop(s) translated)")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from ov_loops.ir.validate import show, validate

    report = validate(args.model)
    if args.format == "json":
        print(report.to_json())
    else:
        if args.show:
            for line in show(args.model):
                print(line)
        for finding in report.findings:
            print(finding.text(report.path))
        print(report.summary())
    return report.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except OvLoopsError as exc:
        print(f"ov-loops: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("ov-loops: interrupted", file=sys.stderr)
        return 130
