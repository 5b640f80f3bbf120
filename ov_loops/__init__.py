"""ov-loops: ONNX models with Loop and Scan -> OpenVINO IR in which every loop is a Loop-5.

    model = ov_loops.convert("model.onnx")      # an openvino.Model
    ov_loops.save(model, "out/model.xml")       # f16 weights, as ovc
    ov_loops.validate("out/model.xml")          # a Report of the IR's loop layers
    ov_loops.check("model.onnx")                # run on a device, compare with numpy
    compiled = ov_loops.compile("model.onnx")   # compiled anew per input-shape signature
    ov_loops.scan(fn, sequences, outputs_info)  # build a Loop-5 with Theano's scan API

Each function's help() gives its options. The types of their results, options and errors are
importable from here too, each documented where it is defined: Conversion and ConvertedLoop
(translate), Report and Finding (validate), CheckReport (check), LoopSpec (a Loop-5's ports),
ConvertOptions (translate's options, which scan and its kin take); the exceptions OvLoopsError,
InputError, ConversionError, UnsupportedError (help(ov_loops.errors)), BuilderError and
SharedVariableError (scan's, shared's). The manual is README.md and docs/ in the ov-loops
source: docs/cli.md (the command line, `ov-loops --help`), docs/scan-guide.md (scan, shared
variables, random streams), docs/deploying.md (targets, streaming, serving).
"""

from __future__ import annotations

import importlib

from ov_loops import lean_openvino

# The process's first `import openvino` after this one leaves OpenVINO's model-conversion API
# (openvino.tools.ovc, its telemetry) to its first use (ov_loops/lean_openvino.py).
lean_openvino.install()

# The names below are resolved on first use (PEP 562), so `import ov_loops` (and the validator,
# `ov_loops.ir`) loads neither onnx, OpenVINO nor numpy until a name that needs them is used;
# `ov_loops.__version__` is ov_loops/version.py's literal (the installed metadata's too).

# Each public name and the module that defines it: what a user calls (listed in __all__, and
# so in help(ov_loops)), then the types of results, options and errors, importable from here
# too but left out of help(ov_loops), where their inherited methods (an Exception's, a
# dataclass's) made most of 1,200 lines; the docstring names them.
_CALLED = {
    "check": "ov_loops.checking",
    "compile": "ov_loops.specialising.compiled",
    "convert": "ov_loops.api",
    "foldl": "ov_loops.frontends.theano.scan",
    "foldr": "ov_loops.frontends.theano.scan",
    "from_ir_outputs": "ov_loops.frontends.onnx.sequence_io",
    "function": "ov_loops.frontends.theano.shared_variables",
    "map": "ov_loops.frontends.theano.scan",
    "pack_sequence": "ov_loops.contract.kinds",
    "RandomStreams": "ov_loops.frontends.theano.random_streams",
    "reduce": "ov_loops.frontends.theano.scan",
    "save": "ov_loops.api",
    "scan": "ov_loops.frontends.theano.scan",
    "shared": "ov_loops.frontends.theano.shared_variables",
    "to_ir_inputs": "ov_loops.frontends.onnx.sequence_io",
    "translate": "ov_loops.api",
    "unpack_sequence": "ov_loops.contract.kinds",
    "until": "ov_loops.frontends.theano.body",
    "validate": "ov_loops.ir.validate",
}
_TYPES = {
    "BuilderError": "ov_loops.frontends.theano.arguments",
    "CheckReport": "ov_loops.checking",
    "Conversion": "ov_loops.conversion.report",
    "ConversionError": "ov_loops.errors",
    "ConvertedLoop": "ov_loops.conversion.report",
    "ConvertOptions": "ov_loops.convert_options",
    "Finding": "ov_loops.ir.validate",
    "InputError": "ov_loops.errors",
    "LoopSpec": "ov_loops.contract.spec",
    "OvLoopsError": "ov_loops.errors",
    "Report": "ov_loops.ir.validate",
    "SharedVariableError": "ov_loops.frontends.theano.shared_variables",
    "UnsupportedError": "ov_loops.errors",
}
_HOMES = {**_CALLED, **_TYPES}

__all__ = list(_CALLED)


def __getattr__(name: str) -> object:
    """A public name, imported from its home module the first time it is asked for."""
    if name == "__version__":
        from ov_loops.version import VERSION

        globals()[name] = VERSION
        return globals()[name]
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ov_loops' has no attribute '{name}'")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
