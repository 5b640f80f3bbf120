"""The installed version of ov-loops (the face's `ov_loops.__version__`, the CLI's `--version`,
the IR's provenance), read without importing the face."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def installed_version() -> str:
    """The installed distribution's version; "0+unknown" when ov_loops runs from a source tree
    that was never installed."""
    try:
        return version("ov-loops")
    except PackageNotFoundError:
        return "0+unknown"
