"""proto/onnx_parts.py: modules of the installed onnx loaded without onnx's __init__, once,
and handed to a later `import onnx`."""

from __future__ import annotations

from tests.child_process import run_python_surviving

# A fresh process without onnx: a module loaded twice is one module with one finder; a file
# onnx has not is an ImportError naming the module; `import onnx` then gets the loaded one.
ONCE_AND_MISSING = """
import sys
from ov_loops.frontends.onnx.proto.onnx_parts import HandedOver, extension_file_names, onnx_module
names = extension_file_names('onnx_cpp2py_export')
first = onnx_module('onnx.onnx_cpp2py_export', names)
assert onnx_module('onnx.onnx_cpp2py_export', names) is first
finders = [f for f in sys.meta_path if isinstance(f, HandedOver)]
assert [f.name for f in finders] == ['onnx.onnx_cpp2py_export'], finders
try:
    onnx_module('onnx.no_such_module', ['no_such_module.py'])
except ImportError as exc:
    assert 'onnx.no_such_module is missing' in str(exc), exc
else:
    raise AssertionError('no ImportError')
assert 'onnx' not in sys.modules and 'onnx.onnx_cpp2py_export' not in sys.modules
import onnx
assert onnx.onnx_cpp2py_export is first and sys.modules['onnx.onnx_cpp2py_export'] is first
assert onnx_module('onnx.onnx_cpp2py_export', names) is first
print('ok')
"""


def test_a_module_is_loaded_once_and_handed_to_onnx(tmp_path):
    result = run_python_surviving(["-c", ONCE_AND_MISSING], tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_extension_file_names_end_in_this_python_suffixes():
    from importlib.machinery import EXTENSION_SUFFIXES

    from ov_loops.frontends.onnx.proto.onnx_parts import extension_file_names

    names = extension_file_names("stem")
    assert len(names) == len(EXTENSION_SUFFIXES) and all(n.startswith("stem.") for n in names)
