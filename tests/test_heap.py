"""The C library's free heap given back between phases (heap.py): glibc's malloc_trim(0) is
called, harmless to what is allocated, skipped where the C library has none; conversion and
saving call it where their phases end."""

from __future__ import annotations

import ctypes
import os

import pytest

import ov_loops.api
from benchmarks.generated_models import nested_loops
from ov_loops import heap, staging
from ov_loops.conversion.driver import Converter
from ov_loops.frontends.onnx.load.load import load_model
from ov_loops.loopir.passes import simplify
from tests.onnx_builders import side_by_side_loops


@pytest.fixture
def fresh_lookup():
    """malloc_trim looked up again by the test (and again by whatever runs after it)."""
    heap._malloc_trim.cache_clear()
    yield
    heap._malloc_trim.cache_clear()


def _is_glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError):
        return False


def test_calls_malloc_trim_with_no_padding(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "_malloc_trim", lambda: calls.append)
    heap.release_freed_heap()
    assert calls == [0]


@pytest.mark.skipif(not _is_glibc(), reason="glibc's malloc_trim")
def test_finds_glibcs_malloc_trim(fresh_lookup):
    trim = heap._malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)  # 1: memory was given back


def test_what_is_allocated_survives_a_release():
    kept = [bytes([index % 256]) * 4096 for index in range(2000)]
    freed = [bytearray(4096) for _ in range(2000)]
    del freed
    heap.release_freed_heap()
    heap.release_freed_heap()
    assert all(block == bytes([index % 256]) * 4096 for index, block in enumerate(kept))
    assert len(bytearray(1 << 20)) == 1 << 20  # the heap still allocates


@pytest.mark.parametrize("error", [OSError, TypeError, AttributeError])
def test_nothing_happens_without_malloc_trim(monkeypatch, fresh_lookup, error):
    """musl and macOS have no malloc_trim (AttributeError); Windows has no CDLL(None)."""

    def no_library(*args, **kwargs):
        raise error("no malloc_trim here")

    monkeypatch.setattr(ctypes, "CDLL", no_library)
    assert heap._malloc_trim() is None
    heap.release_freed_heap()  # no error


def test_moc_and_saving_release_the_freed_heap(monkeypatch, tmp_path):
    """Once before each MOC run of a body (nest8's outer body: its frontend conversions, one a
    level, are freed by then) and once before the IR is written."""
    released = []
    monkeypatch.setattr(simplify, "release_freed_heap", lambda: released.append("moc"))
    monkeypatch.setattr(staging, "release_freed_heap", lambda: released.append("save"))
    monkeypatch.setattr(simplify, "_UNCHANGED", {})  # no body skipped for an earlier test's
    runs, moc = [], simplify.apply_moc_transformations

    def counted_moc(*args, **kwargs):
        runs.append(args)
        return moc(*args, **kwargs)

    monkeypatch.setattr(simplify, "apply_moc_transformations", counted_moc)
    converted = ov_loops.api.translate(nested_loops(3).SerializeToString()).model
    assert len(runs) >= 1 and released == ["moc"] * len(runs)
    ov_loops.api.save(converted, tmp_path / "model.xml")
    assert released[len(runs) :] == ["save"]
    assert (tmp_path / "model.xml").exists()


# -- glibc's fast bins off while a model converts ------------------------------------------------


class _Mallopt:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, parameter: int, value: int) -> int:
        self.calls.append((parameter, value))
        return 1


def test_a_conversion_runs_with_fast_bins_off_and_restores_them(monkeypatch):
    mallopt = _Mallopt()
    monkeypatch.setattr(heap, "_mallopt", lambda: mallopt)
    conversion = Converter(load_model(side_by_side_loops(2))).convert()
    assert len(conversion.loops) == 4
    assert mallopt.calls == [(heap.M_MXFAST, 0), (heap.M_MXFAST, 128)]


def test_fast_bins_are_restored_when_the_conversion_fails(monkeypatch):
    mallopt = _Mallopt()
    monkeypatch.setattr(heap, "_mallopt", lambda: mallopt)
    with pytest.raises(RuntimeError), heap.without_fast_bins():
        raise RuntimeError("the conversion failed")
    assert mallopt.calls[-1] == (heap.M_MXFAST, heap.DEFAULT_MXFAST)


def test_fast_bins_the_user_tuned_are_left_alone(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mxfast=64")
    assert heap._mallopt() is None


@pytest.mark.skipif(
    not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"), reason="glibc only"
)
def test_glibc_takes_the_setting(monkeypatch):
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    mallopt = heap._mallopt()
    assert mallopt is not None
    with heap.without_fast_bins():
        assert mallopt(heap.M_MXFAST, 0) == 1  # accepted, as the context set it
