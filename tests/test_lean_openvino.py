"""The first `import openvino` after `import ov_loops` leaves openvino.tools.ovc to its first use
(ov_loops/lean_openvino.py): each case in a fresh process, where that import is the first."""

from __future__ import annotations

import json
import textwrap

from tests.child_process import run_python

OV_LOOPS_FIRST = """
import json, sys
import ov_loops, openvino
from ov_loops import lean_openvino
seen = {
    "ovc_at_import": "openvino.tools.ovc" in sys.modules,
    "finder_left": any(isinstance(f, lean_openvino._FirstImport) for f in sys.meta_path),
}
from openvino import convert_model as imported_name
attribute = openvino.convert_model
from openvino.tools.ovc import convert_model as original
seen["same_function"] = imported_name is original and attribute is original
try:
    openvino.no_such_name
except AttributeError as error:
    seen["missing"] = str(error)
from benchmarks.generated_models import sequential_loops
model = ov_loops.convert(sequential_loops(2))
seen["converted_loops"] = sum(op.get_type_name() == "Loop" for op in model.get_ordered_ops())
print(json.dumps(seen))
"""


def test_openvino_imported_after_ov_loops_imports_ovc_on_first_use(tmp_path):
    """ovc is not imported with openvino; `openvino.convert_model` and `from openvino import
    convert_model` give ovc's own function; other missing names are AttributeErrors; the finder
    is gone and ov_loops converts."""
    done = run_python(["-c", OV_LOOPS_FIRST], tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {
        "ovc_at_import": False,
        "finder_left": False,
        "same_function": True,
        "missing": "module 'openvino' has no attribute 'no_such_name'",
        "converted_loops": 2,
    }


def test_openvino_imported_before_ov_loops_is_left_as_it_is(tmp_path):
    program = (
        "import sys, openvino, ov_loops, ov_loops.api\n"
        "from ov_loops import lean_openvino\n"
        "print('openvino.tools.ovc' in sys.modules, "
        "any(isinstance(f, lean_openvino._FirstImport) for f in sys.meta_path), "
        "'__getattr__' in vars(openvino))\n"
    )
    done = run_python(["-c", program], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "False"]


def _fake_openvino(root, guarded: bool) -> None:
    """An `openvino` package whose __init__ imports openvino.tools.ovc's convert_model, in a
    try as OpenVINO's does (`guarded`) or not (a version that needs it)."""
    package = root / "openvino"
    (package / "tools" / "ovc").mkdir(parents=True)
    (package / "tools" / "__init__.py").write_text("")
    (package / "tools" / "ovc" / "__init__.py").write_text("def convert_model(): return 'ovc'\n")
    body = "from openvino.tools.ovc import convert_model\n"
    if guarded:
        body = "try:\n    " + body + "except ImportError:\n    pass\n"
    (package / "__init__.py").write_text("CORE = 'core'\n" + body)


def _first_import_of(root) -> list[str]:
    program = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(root)!r})
        import ov_loops, openvino
        ovc_at_import = 'openvino.tools.ovc' in sys.modules
        print(openvino.__file__.startswith({str(root)!r}), openvino.CORE, ovc_at_import,
              openvino.convert_model())
        """
    )
    done = run_python(["-c", program], root)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_a_package_that_tries_ovc_gets_it_on_first_use(tmp_path):
    _fake_openvino(tmp_path, guarded=True)
    assert _first_import_of(tmp_path) == ["True", "core", "False", "ovc"]


def test_a_package_that_needs_ovc_is_imported_as_usual(tmp_path):
    """Its import fails with ovc refused: it is executed again with ovc, and imports."""
    _fake_openvino(tmp_path, guarded=False)
    assert _first_import_of(tmp_path) == ["True", "core", "True", "ovc"]
