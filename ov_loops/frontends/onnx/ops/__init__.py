"""The ONNX loop ops: each module of this package that defines one registers it (registry.py),
with the opsets it reads, and the LoopIR it makes.

Importing the package imports every module of it, so that every op is registered before the
registry is asked (a new op is a new module here, and nothing else).
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
