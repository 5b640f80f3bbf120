"""The version of ov-loops (the face's `ov_loops.__version__`, the CLI's `--version`, the IR's
provenance): one literal, which the build reads as the distribution's version
(pyproject.toml's `[tool.setuptools.dynamic]`, parsed from this file without importing it), so
the installed metadata says the same and nothing reads the metadata at run time: importing
importlib.metadata (email, csv, zipfile with it) and reading the METADATA header cost a fresh
process about 28 ms of CPU in its first conversion, where openvino.convert_model's process has
imported it already."""

from __future__ import annotations

VERSION = "0.1.0"
