"""The options every command shares: how it reports (--format, -q, -v)."""

from __future__ import annotations

import argparse


def add_output_options(command: argparse.ArgumentParser, json_keys: str) -> None:
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
