"""`ov-loops` command line, thin over the Python API.

Exit codes: 0 success; 1 the model cannot be converted, the IR has an error, or outputs do not
match the reference; 2 unreadable input, an absent device, or bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ov_loops.errors import OvLoopsError
from ov_loops.loopir.passes.levels import OPTIMIZE_LEVELS
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS
from ov_loops.targets import add_target_arguments


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"ov-loops: error: {message} (see ov-loops --help)\n")


def _add_convert(commands) -> None:
    convert = commands.add_parser("convert", help="convert an ONNX model to OpenVINO IR")
    convert.add_argument("model", help="the ONNX model (.onnx)")
    convert.add_argument(
        "-o", "--output", required=True, help="the IR to write (.xml; .bin beside)"
    )
    convert.add_argument(
        "--compress-to-fp16", action="store_true", help="store f32 weights as f16 in the .bin"
    )
    convert.add_argument(
        "--optimize",
        choices=OPTIMIZE_LEVELS,
        default="default",
        help="loop optimisations: none (workarounds only), default, max (default: default)",
    )
    add_target_arguments(convert)
    convert.set_defaults(run=_convert)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ov-loops", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_convert(commands)

    validate = commands.add_parser(
        "validate", help="check the Loop / TensorIterator layers of an OpenVINO IR"
    )
    validate.add_argument("model", help="the IR (.xml; .bin beside)")
    validate.add_argument("--format", choices=("text", "json"), default="text")
    validate.add_argument("--show", action="store_true", help="print each loop's structure")
    validate.add_argument(
        "--target", choices=("GPU", "NPU"), help="also check what this device's plugin refuses"
    )
    validate.set_defaults(run=_validate)

    check = commands.add_parser(
        "check", help="run a model on a device and compare it with a numpy reference"
    )
    check.add_argument("model", help="the ONNX model (.onnx) or IR (.xml)")
    check.add_argument("--device", default="CPU", help="CPU, GPU, NPU or AUTO (default CPU)")
    check.add_argument("--inputs", help="inputs as an .npz (others are generated)")
    check.add_argument(
        "--shape",
        action="append",
        metavar="NAME=D0,D1,..",
        help="the shape to generate for an input (repeatable)",
    )
    check.add_argument(
        "--seed", type=int, default=0, help="seed of the generated inputs (non-negative)"
    )
    check.add_argument("--rtol", type=float, default=1e-4)
    check.add_argument("--atol", type=float, default=1e-5)
    check.add_argument(
        "--precision",
        choices=("f32", "native"),
        default="f32",
        help="f32 (default) asks the device for f32 inference; native keeps "
        "its default (bf16 on this kind of CPU)",
    )
    check.add_argument(
        "--max-iterations",
        type=int,
        default=DEFAULT_MAX_ITERATIONS,
        metavar="N",
        help="the references stop (exit 2) after N loop iterations in total, nested loops "
        f"included (default {DEFAULT_MAX_ITERATIONS})",
    )
    check.set_defaults(run=_check)
    return parser


def _convert(args: argparse.Namespace) -> int:
    from ov_loops.api import save, translate

    conversion = translate(args.model, args.optimize, args.target, args.unroll)
    save(conversion.model, args.output, compress_to_fp16=args.compress_to_fp16)
    for loop in conversion.loops:
        print(loop.summary())
    print(f"wrote {args.output} ({len(conversion.loops)} loop(s) translated)")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from ov_loops.ir.validate import show, validate

    report = validate(args.model, args.target)
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


def _check(args: argparse.Namespace) -> int:
    from ov_loops.checking import check
    from ov_loops.checking.inputs import parse_shapes

    report = check(
        args.model,
        device=args.device,
        inputs=args.inputs,
        shapes=parse_shapes(args.shape),
        seed=args.seed,
        rtol=args.rtol,
        atol=args.atol,
        precision=args.precision,
        max_iterations=args.max_iterations,
    )
    for line in report.lines():
        print(line)
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
