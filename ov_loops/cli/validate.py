"""`ov-loops validate`: its options and the call they make."""

from __future__ import annotations

import argparse

from ov_loops.cli.output import add_output_options
from ov_loops.ir.rules import rule_targets
from ov_loops.ir.validate import VALIDATE_JSON_KEYS


def add_arguments(validate: argparse.ArgumentParser) -> None:
    """The arguments of `ov-loops validate` (cli/main.py lists the command)."""
    validate.add_argument("model", help="the IR (.xml; .bin beside)")
    add_output_options(validate, VALIDATE_JSON_KEYS)
    validate.add_argument(
        "--show", action="store_true", help="print each loop's structure (json: key show)"
    )
    validate.add_argument(
        "--target", choices=rule_targets(), help="also check what this device's plugin refuses"
    )
    validate.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """`ov-loops validate`: one line per finding and a summary (or one JSON object)."""
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
