"""`save` (and so `convert`, `check` and the OVMS layout) never writes an IR the validator
rejects (issue 20 item 2): the IR is validated before it is moved into place; an error is one
line naming the loop and the rule, exit 1, nothing written; warnings do not block."""

from __future__ import annotations

import logging
import subprocess

import numpy as np
import openvino as ov
import openvino.opset15 as ops
import pytest

import ov_loops
import ov_loops.api
import ov_loops.ir.validate
from ov_loops.cli import main
from ov_loops.conversion.report import Conversion
from ov_loops.errors import ConversionError
from ov_loops.serving import save_ovms
from tests.child_process import run_python
from tests.harness import assert_one_line_error, write
from tests.onnx_builders import T, graph, loop_body, model, node, typed


def _counting_loop(condition: np.generic, trips: int = 3, concatenated: bool = False) -> ov.Model:
    """acc += 1, `trips` times, in a Loop-5 named 'counting' whose execution_condition Result
    is the Constant `condition` (not a boolean: SP002); with `concatenated`, acc stacked too."""
    acc_in = ops.parameter([2], np.float32, name="acc_in")
    acc = ops.result(ops.add(acc_in, ops.constant(np.ones(2, np.float32))))
    stacked = ops.result(ops.unsqueeze(acc.input_value(0), ops.constant(np.array([0], np.int64))))
    keep = ops.result(ops.constant(condition))
    body = ov.Model([acc, keep, stacked], [acc_in], "body")
    acc0 = ops.parameter([2], np.float32, name="acc0")
    loop = ops.loop(ops.constant(np.int64(trips)), ops.constant(True))
    loop.set_friendly_name("counting")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(acc_in, acc0.output(0), acc.output(0))
    outputs = [loop.get_iter_value(acc.output(0), -1)]
    if concatenated:
        outputs.append(loop.get_concatenated_slices(stacked.output(0), 0, 1, 1, -1, 0))
    return ov.Model(outputs, [acc0], "counting")


REJECTED = "the IR fails validation, nothing written: loop 'counting': SP002 body Result"


def test_save_refuses_an_ir_the_validator_rejects_and_writes_nothing(tmp_path):
    target = tmp_path / "made" / "deeper" / "model.xml"
    with pytest.raises(ConversionError, match=REJECTED) as refused:
        ov_loops.save(_counting_loop(np.float32(1)), target)
    assert "\n" not in str(refused.value) and refused.value.exit_code == 1
    assert list(tmp_path.iterdir()) == []  # not even the directories it made


def test_save_writes_an_ir_with_warnings_only_and_logs_them(tmp_path, caplog):
    """WR001 (a constant zero trip count with a concatenated output) is a warning: written."""
    xml = tmp_path / "model.xml"
    with caplog.at_level(logging.INFO, logger="ov_loops"):
        ov_loops.save(_counting_loop(np.bool_(True), trips=0, concatenated=True), xml)
    report = ov_loops.validate(xml)
    assert [f.code for f in report.findings] == ["WR001"] and report.exit_code == 0
    assert "validate: WR001 at loop 'counting': constant trip count 0" in caplog.text


def test_save_ovms_refuses_it_and_leaves_the_repository_as_it_was(tmp_path):
    repository = tmp_path / "repository"
    repository.mkdir()
    config = '{"model_config_list": [{"config": {"name": "other", "base_path": "other"}}]}'
    (repository / "config.json").write_text(config)
    with pytest.raises(ConversionError, match=REJECTED):
        save_ovms(_counting_loop(np.float32(1)), repository, "counting")
    assert [p.name for p in repository.iterdir()] == ["config.json"]
    assert (repository / "config.json").read_text() == config


def test_save_skips_validation_without_loop_layers(tmp_path, monkeypatch):
    """The validator checks loop layers only: a loop-free IR (unrolled, say) is not re-read."""
    monkeypatch.setattr(ov_loops.ir.validate, "validate", lambda path: pytest.fail("validated"))
    x = ops.parameter([2], np.float32, name="x")
    ov_loops.save(ov.Model([ops.result(ops.relu(x))], [x], "flat"), tmp_path / "flat.xml")
    with pytest.raises(BaseException, match="validated"):
        ov_loops.save(_counting_loop(np.bool_(True)), tmp_path / "loop.xml")


LOOP_FREE_SAVE = """
import sys
import numpy as np, openvino as ov, openvino.opset15 as ops
import ov_loops.api
x = ops.parameter([2], np.float32, name="x")
ov_loops.api.save(ov.Model([ops.result(ops.relu(x))], [x], "flat"), sys.argv[1])
print(sorted(name for name in sys.modules if name.startswith(("lxml", "ov_loops.ir"))))
"""


def test_save_of_a_loop_free_ir_imports_neither_lxml_nor_the_validator(tmp_path):
    """Nothing to validate, nothing to import: lxml and the rules grew the process 4.1 MiB."""
    done = run_python(["-c", LOOP_FREE_SAVE, str(tmp_path / "flat.xml")], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "['ov_loops.ir', 'ov_loops.ir.kinds']"
    assert (tmp_path / "flat.xml").is_file() and (tmp_path / "flat.bin").is_file()


def _counting_onnx(doubling: bool = False):
    """M trips of v = v (an Identity: folded away) or, `doubling`, of v = v + v."""
    step = (
        node("Add", ["v_in", "v_in"], ["v_out"])
        if doubling
        else node("Identity", ["v_in"], ["v_out"])
    )
    body = loop_body(
        [node("Identity", ["cond_in"], ["keep"]), step],
        [typed("v_in", T.FLOAT, [2])],
        [typed("keep", T.BOOL, []), typed("v_out", T.FLOAT, [2])],
    )
    main_graph = graph(
        [node("Loop", ["M", "", "v0"], ["v"], body=body, name="counting")],
        [typed("M", T.INT64, []), typed("v0", T.FLOAT, [2])],
        [typed("v", T.FLOAT, [2])],
    )
    return model(main_graph)


def test_cli_convert_exits_1_naming_the_loop_and_the_rule(tmp_path, capsys, monkeypatch):
    """Whatever produced the model: here a conversion whose model the validator rejects."""
    source = write(tmp_path, _counting_onnx())
    rejected = Conversion(_counting_loop(np.float32(1)), [])
    monkeypatch.setattr(ov_loops.api, "translate_with", lambda *args, **kwargs: rejected)
    code = main(["convert", str(source), "-o", str(tmp_path / "out" / "model.xml")])
    captured = capsys.readouterr()
    result = subprocess.CompletedProcess([], code, captured.out, captured.err)
    assert_one_line_error(result, 1, REJECTED)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]


FREED_CHECK = """
import gc, sys, weakref
import openvino as ov
import ov_loops.api, ov_loops.ir.validate
from ov_loops.cli import main

translate, validate, models = ov_loops.api.translate_with, ov_loops.ir.validate.validate, []

def translating(*args, **kwargs):
    conversion = translate(*args, **kwargs)
    models.append(weakref.ref(conversion.model))
    return conversion

def validating(path):
    gc.collect()
    held = [o for t in gc.get_objects() for o in gc.get_referents(t)
            if isinstance(o, (ov.Model, ov.Node, ov.Output))]
    print("alive", [m() is not None for m in models], "held", len(held))
    return validate(path)

ov_loops.api.translate_with, ov_loops.ir.validate.validate = translating, validating
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("layout", ["ir", "ovms"])
def test_cli_convert_validates_after_the_model_is_freed(tmp_path, layout):
    """Validating costs about twice the CPU while the converted model lives in the process
    (ov_loops.staging): when the validator runs, no ov.Model, Node or Output is left."""
    source = write(tmp_path, _counting_onnx(doubling=True))
    arguments = ["convert", str(source), "-o", str(tmp_path / "out"), "--layout", layout]
    done = run_python(["-c", FREED_CHECK, *arguments], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "alive [False] held 0" in done.stdout
