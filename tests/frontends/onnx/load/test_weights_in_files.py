"""A model read from a path for conversion leaves its weights in its file
(frontends/onnx/load/weights.py): the wire-format walk, and conversions that give the same model."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest

import ov_loops
from ov_loops.api import translate_with
from ov_loops.convert_options import ConvertOptions
from ov_loops.frontends.onnx.load import weights
from ov_loops.frontends.onnx.load.load import load_model
from tests.onnx_builders import T, const, graph, loop_body, model, node, typed

RNG = np.random.default_rng(24)
BIG = weights.MIN_BYTES // 4 * 4  # f32 elements of a big tensor: 4 * BIG bytes


def _big(name: str, elements: int = BIG) -> onnx.TensorProto:
    return const(name, RNG.standard_normal(elements).astype(np.float32))


def _model_with_weights_everywhere() -> onnx.ModelProto:
    """Big tensors as a main initializer, a body initializer, a body Constant and an If
    branch's initializer; small ones beside them."""
    body = loop_body(
        [
            node("Constant", [], ["c"], value=_big("")),
            node("Add", ["h_in", "W"], ["hw"]),
            node("Add", ["hw", "c"], ["h_out"]),
            node("Identity", ["cond_in"], ["keep"]),
        ],
        [typed("h_in", T.FLOAT, [BIG])],
        [typed("keep", T.BOOL, []), typed("h_out", T.FLOAT, [BIG])],
        initializers=[_big("W")],
    )
    branch = graph(
        [node("Add", ["h", "B"], ["b_out"])], [], [typed("b_out", T.FLOAT, [BIG])], [_big("B")]
    )
    other = graph([node("Add", ["h", "small"], ["o_out"])], [], [typed("o_out", T.FLOAT, [BIG])])
    main = graph(
        [
            node("Loop", ["M", "", "h0"], ["h"], body=body),
            node("If", ["flag"], ["y"], then_branch=branch, else_branch=other),
        ],
        [typed("M", T.INT64, []), typed("flag", T.BOOL, [])],
        [typed("y", T.FLOAT, [BIG])],
        initializers=[_big("h0"), const("small", np.ones(1, np.float32))],
    )
    return model(main)


def _tensors(made: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    return {
        f"{index}:{tensor.name}": tensor for index, tensor in enumerate(weights.all_tensors(made))
    }


def test_big_raw_data_is_referenced_where_it_lies_in_the_file(tmp_path):
    made = _model_with_weights_everywhere()
    path = tmp_path / "m.onnx"
    onnx.save_model(made, path)
    walked = onnx.ModelProto()
    walked.ParseFromString(weights.read_without_weights(path))
    data = path.read_bytes()
    expected = onnx.ModelProto()
    expected.CopyFrom(made)
    referenced = 0
    for (key, original), tensor in zip(_tensors(expected).items(), _tensors(walked).values()):
        if len(original.raw_data) < weights.MIN_BYTES:
            assert tensor == original, key
            continue
        entries = {entry.key: entry.value for entry in tensor.external_data}
        assert entries["location"] == "m.onnx" and tensor.data_location == T.EXTERNAL, key
        offset, length = int(entries["offset"]), int(entries["length"])
        assert data[offset : offset + length] == original.raw_data, key
        original.ClearField("raw_data")  # the rest of the model is as it was
        original.data_location = T.EXTERNAL
        original.external_data.extend(tensor.external_data)
        referenced += 1
    assert referenced == 4
    assert walked == expected


def test_a_file_without_big_tensors_or_not_a_model_is_read_as_usual(tmp_path):
    small = tmp_path / "small.onnx"
    made = model(
        graph([node("Add", ["x", "k"], ["y"])], [typed("x")], [typed("y")], [_big("k", 8)])
    )
    onnx.save_model(made, small)
    assert weights.read_without_weights(small) is None
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(bytes([0xFF]) * weights.MIN_BYTES * 2)
    assert weights.read_without_weights(garbage) is None


def _mapped(path) -> bool:
    """Whether this process maps the file `path` (Linux's /proc/self/maps)."""
    with open("/proc/self/maps") as maps:
        return any(line.rstrip().endswith(str(path.resolve())) for line in maps)


@pytest.mark.parametrize("shared", [False, True], ids=["copied", "shared"])
@pytest.mark.parametrize("external", [False, True], ids=["embedded", "external_data"])
def test_converting_the_path_gives_the_model_converting_it_in_memory_gives(
    tmp_path, monkeypatch, external, shared
):
    """Weights read from the file through memory addresses (copied into the model), or mapped
    by the frontend and shared (`ov-loops convert`'s shares_weights), or held in the loaded
    message: the same IR, byte for byte; the loaded message held no weights. Shared, the model
    maps the file while it lives (Linux); the working directory is the caller's again after."""
    made = _model_with_weights_everywhere()
    path = tmp_path / "m.onnx"
    saved = onnx.ModelProto()
    saved.CopyFrom(made)  # saving as external data changes the message saved
    onnx.save_model(saved, path, save_as_external_data=external, location="m.data")
    loaded = load_model(path, weights_in_files=True)
    assert all(
        len(tensor.raw_data) < weights.MIN_BYTES for tensor in weights.all_tensors(loaded.model)
    )
    monkeypatch.chdir(tmp_path)  # a relative path, as a user gives it
    options = ConvertOptions()
    from_file = translate_with(path.name, options, shares_weights=shared).model
    assert Path.cwd() == tmp_path
    weights_file = tmp_path / ("m.data" if external else "m.onnx")
    if Path("/proc/self/maps").exists():
        assert _mapped(weights_file) == shared
    in_memory = ov_loops.convert(made)
    for name, converted in (("file", from_file), ("memory", in_memory)):
        ov.save_model(converted, tmp_path / f"{name}.xml", compress_to_fp16=False)
    assert (tmp_path / "file.bin").read_bytes() == (tmp_path / "memory.bin").read_bytes()
    compiled = ov.Core().compile_model(from_file, "CPU")
    feeds = {"M": np.array(2, np.int64), "flag": np.array(True)}
    got = compiled(feeds)[0]
    tensors = {
        tensor.name: onnx.numpy_helper.to_array(tensor) for tensor in _tensors(made).values()
    }
    constant = onnx.numpy_helper.to_array(made.graph.node[0].attribute[0].g.node[0].attribute[0].t)
    expected = tensors["h0"] + 2 * (tensors["W"] + constant) + tensors["B"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _removed_directory() -> str:
    raise FileNotFoundError(2, "No such file or directory")


def test_tensors_refer_to_their_files_under_one_root_or_not_at_all(tmp_path, monkeypatch):
    """refer_to_files: absolute locations with offset and length, the root returned; an empty
    tensor becomes an empty value; a relative location, or a working directory removed (none to
    come back to), refers nothing (None)."""
    data = tmp_path / "w.bin"
    data.write_bytes(bytes(range(16)))
    made = model(
        graph(
            [node("Add", ["x", "k"], ["y"])],
            [typed("x", T.FLOAT, [2])],
            [typed("y", T.FLOAT, [2])],
            [const("k", np.zeros(2, np.float32)), const("e", np.zeros(0, np.float32))],
        )
    )
    kept, empty = made.graph.initializer
    for tensor, offset in ((kept, 8), (empty, 16)):
        tensor.ClearField("raw_data")
        tensor.data_location = T.EXTERNAL
        tensor.external_data.add(key="location", value=str(data))
        tensor.external_data.add(key="offset", value=str(offset))
    relative = onnx.ModelProto()
    relative.CopyFrom(made)
    relative.graph.initializer[0].external_data[0].value = "w.bin"
    assert weights.refer_to_files(relative) is None
    with monkeypatch.context() as patched:
        patched.setattr(weights.os, "getcwd", _removed_directory)
        assert weights.refer_to_files(made) is None
    assert weights.refer_to_files(made) == "/"
    assert {entry.key: entry.value for entry in kept.external_data} == {
        "location": str(data),
        "offset": "8",
        "length": "8",
    }
    assert empty.data_location == T.DEFAULT and empty.raw_data == b""


def test_ov_loops_convert_shares_the_weights_and_writes_what_save_writes(tmp_path, monkeypatch):
    """`ov-loops convert` converts its main graph with the tensors referring to their file
    (shares_weights), from the file system's root, and writes the .bin `ov_loops.save` writes."""
    from ov_loops.cli import main
    from ov_loops.conversion import driver

    path = tmp_path / "m.onnx"
    onnx.save_model(_model_with_weights_everywhere(), path)
    roots = []
    referring = driver.refer_to_files

    def recorded(model):
        roots.append(referring(model))
        return roots[-1]

    monkeypatch.setattr(driver, "refer_to_files", recorded)
    assert main(["convert", str(path), "-o", str(tmp_path / "cli.xml"), "-q"]) == 0
    assert roots == ["/"]
    ov_loops.save(ov_loops.convert(path), tmp_path / "api.xml")
    assert (tmp_path / "cli.bin").read_bytes() == (tmp_path / "api.bin").read_bytes()


def _resident_kib(path: Path) -> int:
    """The KiB of the file `path`'s pages resident in this process (Linux's smaps)."""
    resident, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            first = line.split(maxsplit=1)[0]
            if "-" in first and not first.endswith(":"):  # a mapping's header line
                inside = line.rstrip().endswith(str(path.resolve()))
            elif inside and first == "Rss:":
                resident += int(line.split()[1])
    return resident


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's smaps")
def test_released_pages_leave_the_process_and_read_back_the_same(tmp_path):
    """The driver releases the mapped files' pages once the frontend reaches a loop (it has
    copied the graph's tensors by then): they leave the resident set, and a tensor read after
    (a body's, converted later) faults in the same bytes."""
    big = _big("W", 64 * BIG)
    main = graph(
        [node("Add", ["x", "W"], ["y"])],
        [typed("x", T.FLOAT, [64 * BIG])],
        [typed("y", T.FLOAT, [64 * BIG])],
        [big],
    )
    path = tmp_path / "m.onnx"
    onnx.save_model(model(main), path)
    loaded = load_model(path, weights_in_files=True).model
    with weights.MappedFiles() as files:
        files.refer_to_memory(loaded)
        entries = {entry.key: entry.value for entry in loaded.graph.initializer[0].external_data}
        address, length = int(entries["offset"]), int(entries["length"])
        assert ctypes.string_at(address, length) == big.raw_data  # read: the pages resident
        assert _resident_kib(path) * 1024 >= length
        files.release_resident_pages()
        assert _resident_kib(path) * 1024 < length // 8
        assert ctypes.string_at(address, length) == big.raw_data
