"""benchmarks/pytensor_backends.py, tiny: every installed backend compiles the RNN's gradient
(static shapes; OPENVINO and C with unknown ones too) and the PyMC model, and agrees with the C
backend; the report names the targets. No timing worth reading (Numba's and JAX's compilations
take most of its minutes). Skipped without pytensor (ov-loops[pytensor])."""

from __future__ import annotations

import pytest

pytest.importorskip("pytensor", reason="pytensor is not installed (pip install ov-loops[pytensor])")

from benchmarks import pytensor_backends  # noqa: E402


@pytest.mark.parametrize("static", [True, False])
def test_the_rnn_gradient_agrees_on_every_backend(static, capsys, monkeypatch):
    if not static:  # the same graph with unknown shapes: OPENVINO and C only
        modes = pytensor_backends.modes()
        monkeypatch.setattr(
            pytensor_backends, "modes", lambda jax=True: {m: modes[m] for m in ("OPENVINO", "C")}
        )
    pytensor_backends.measure("rnn_grad", hidden=3, steps=4, rounds=1, static=static)
    report = capsys.readouterr().out
    assert "OPENVINO / C = " in report and "targets:" in report
    assert ("JAX " in report) is (static and "JAX" in pytensor_backends.modes())


def test_the_pymc_graph_agrees_on_every_backend(capsys):
    pytest.importorskip("pymc", reason="PyMC is not installed")
    pytensor_backends.measure("pymc", hidden=0, steps=0, rounds=1)
    assert "pymc AR(1), 60 steps" in capsys.readouterr().out
