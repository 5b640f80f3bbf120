"""`ov-loops check`: its options and the call they make."""

from __future__ import annotations

import argparse

from ov_loops.checking.report import CHECK_JSON_KEYS
from ov_loops.checking.settings import DEFAULT_TIMEOUT
from ov_loops.cli.convert import add_convert_options, given_values
from ov_loops.cli.output import add_output_options
from ov_loops.convert_options import OPTION_NAMES
from ov_loops.reference.limits import DEFAULT_MAX_ITERATIONS

CHECK_EPILOG = f"""\
tolerances: |device - reference| <= atol + rtol * |reference|, by the precision an output was
computed in (the narrower of its type and the device's inference precision): f64 1e-7/1e-9,
f32 1e-4/1e-5, f16 5e-3/1e-3, bf16 4e-2/1e-2 (rtol/atol); integers and booleans exact. Where
weights stored as f16 (--compress_to_fp16, on by default) meet results of f32 weights (the ONNX
reference, --load-outputs): at least rtol 2^-9, atol 2^-9 x max|expected| ("f16 weights"). A
global --rtol/--atol replaces the float defaults; --rtol/--atol NAME=V sets output NAME's.

--format json prints one object:
{CHECK_JSON_KEYS}

exit: 0 MATCH, 1 MISMATCH (or the model cannot be converted), 2 bad input or device.
OV_LOOPS_PROGRESS=1 forces progress lines on stderr (default: on a terminal, after 1 s)."""


def add_arguments(check: argparse.ArgumentParser) -> None:
    """The arguments of `ov-loops check` (cli/main.py lists the command) and its epilog."""
    check.epilog = CHECK_EPILOG
    check.formatter_class = argparse.RawDescriptionHelpFormatter
    check.add_argument("model", help="the ONNX model (.onnx) or IR (.xml)")
    add_check_options(check)
    add_output_options(check, "see below")
    check.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """`ov-loops check`: the report as lines (or one JSON object)."""
    report = _report(args)
    print(report.to_json() if args.format == "json" else "\n".join(report.lines()))
    return report.exit_code


def add_check_options(check: argparse.ArgumentParser) -> None:
    """The options of `ov-loops check` (model and output options excepted), convert's
    conversion options among them (`cli.convert.add_convert_options`: one definition);
    these default to None, not given, which an IR requires."""
    check.add_argument("--device", default="CPU", help="CPU, GPU, NPU or AUTO (default CPU)")
    _add_inputs(check)
    for name in ("rtol", "atol"):
        check.add_argument(
            f"--{name}",
            action="append",
            metavar="V|NAME=V",
            help=f"{name} of every float output, or of output NAME (repeatable; see below)",
        )
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
    check.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="stop the device worker (exit 2) when it says nothing for SECONDS in one stage: "
        f"start-up, compile or inference (default {DEFAULT_TIMEOUT:g}; 0: no limit)",
    )
    _add_second_opinions(check)
    add_convert_options(
        check.add_argument_group(
            "conversion of an .onnx, as `ov-loops convert` does it (--chunks adds --stateful); "
            "an .xml refuses these"
        )
    )
    check.set_defaults(**dict.fromkeys(OPTION_NAMES))
    check.add_argument(
        "--specialise",
        action="store_true",
        help="run the model specialised to the inputs' shapes, as ov_loops.compile does: an "
        ".onnx converted with --input set to them (the static-shape passes run), an .xml "
        "reshaped to them; compared with the references of the model as given",
    )
    check.add_argument(
        "--chunks",
        metavar="NAME[:AXIS]=N|L1,L2,...",
        help="feed input NAME in chunks along AXIS (default 0): N near-equal ones or these "
        "lengths (0 allowed), in order on one infer request, then reset_state() and the whole "
        "once more; outputs are compared with one reference pass over the whole. Needs a "
        "stateful model: an .onnx is converted with --stateful, an .xml must be so converted",
    )


def _add_inputs(check: argparse.ArgumentParser) -> None:
    """The inputs fed: read from a file, or generated (shapes, value ranges, seed)."""
    check.add_argument(
        "--inputs",
        metavar="F.npz|F.json",
        help="inputs as an .npz (by name, or arr_0, arr_1, ... in the graph's order) or "
        "polygraphy's --save-inputs .json (others generated)",
    )
    check.add_argument(
        "--shape",
        action="append",
        metavar="NAME=D0,D1|NAME[D0,D1]",
        help="the shape to generate for an input; OpenVINO's NAME[D0,D1],NAME2[D0] form takes "
        "several (repeatable)",
    )
    check.add_argument(
        "--val-range",
        action="append",
        metavar="[NAME=]LO,HI",
        help="generated values of input NAME (or of every number input) in [LO, HI]: integers "
        "uniform, inclusive (M=5,5 fixes a trip count), floats uniform, booleans 0/1 "
        "(repeatable; write --val-range=-1,1 when LO is negative; default integers in [0, 3], "
        "floats N(0, 0.5), booleans true)",
    )
    check.add_argument(
        "--seed", type=int, default=0, help="seed of the generated inputs (non-negative)"
    )


def _add_second_opinions(check: argparse.ArgumentParser) -> None:
    """Saved inputs and outputs, and other sources to compare with."""
    check.add_argument(
        "--save-inputs",
        metavar="F.npz|F.json",
        help="write the inputs fed (all of them); .json: polygraphy's --load-inputs format",
    )
    check.add_argument(
        "--save-outputs",
        metavar="F.npz|F.json",
        help="write the device's outputs; .json: polygraphy's --load-outputs format",
    )
    check.add_argument(
        "--load-outputs",
        metavar="F.npz|F.json",
        help="also compare the device's outputs with these (names: the model's outputs, or "
        "arr_0, arr_1, ... in their order; .json: polygraphy's --save-outputs of one runner); "
        "a difference is a MISMATCH",
    )
    check.add_argument(
        "--against",
        action="append",
        choices=("convert-model",),
        default=[],
        help="convert-model: also run openvino.convert_model's IR and compare it with the "
        "reference (ONNX only)",
    )


def _report(args: argparse.Namespace):
    """`ov_loops.check` with the options parsed from the command line."""
    from ov_loops.checking import check
    from ov_loops.checking.inputs import parse_shapes, parse_val_ranges
    from ov_loops.checking.tolerance import parse_tolerances

    return check(
        args.model,
        device=args.device,
        inputs=args.inputs,
        shapes=parse_shapes(args.shape),
        seed=args.seed,
        precision=args.precision,
        max_iterations=args.max_iterations,
        tolerances=parse_tolerances(args.rtol, args.atol),
        val_ranges=parse_val_ranges(args.val_range),
        save_inputs=args.save_inputs,
        save_outputs=args.save_outputs,
        load_outputs=args.load_outputs,
        against=tuple(args.against),
        chunks=args.chunks,
        specialise=args.specialise,
        timeout=args.timeout or None,
        **given_values(args),
    )
