"""The installed version of ov-loops (the face's `ov_loops.__version__`, the CLI's `--version`,
the IR's provenance), read without importing the face.

Read once per process, from the header of the distribution's METADATA (PKG-INFO for an
`.egg-info` install, such as a source tree's `pip install -e` by setuptools): its `Version` field
comes before the first blank line, and `importlib.metadata.version` parsed the whole file, the
README (1,500 lines) with it, at every call (about 6-9 ms a call, 13 ms the first; every
conversion records the version in the IR it makes)."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, distribution


@functools.cache
def installed_version() -> str:
    """The installed distribution's version; "0+unknown" when ov_loops runs from a source tree
    that was never installed."""
    try:
        installed = distribution("ov-loops")
    except PackageNotFoundError:
        return "0+unknown"
    metadata = installed.read_text("METADATA") or installed.read_text("PKG-INFO") or ""
    return header_field(metadata, "Version") or "0+unknown"


def header_field(metadata: str, name: str) -> str | None:
    """The value of the field `name` in the header of a core-metadata text (`Name: value`
    lines up to the first blank line), or None."""
    for line in metadata.splitlines():
        if not line.strip():
            return None
        key, colon, value = line.partition(":")
        if colon and key.strip().lower() == name.lower():
            return value.strip()
    return None
