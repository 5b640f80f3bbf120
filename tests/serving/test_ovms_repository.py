"""--layout ovms: an OpenVINO Model Server repository that keeps the user's settings
(config.json merged, the rest byte for byte), writes new versions and never overwrites one
unless asked, and conforms to OVMS's documented config schema and repository layout.

OVMS itself is not installable here: these tests check the schema (tests/serving/ovms_schema.py,
transcribed from OVMS's source) and the layout, not that OVMS serves the repository."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import openvino as ov
import pytest

import ov_loops
from ov_loops.errors import InputError
from ov_loops.serving import save_ovms, versions
from ov_loops.serving.json_text import remove_member, set_member
from tests.harness import assert_one_line_error, run_cli
from tests.serving.ovms_schema import CONFIG_SCHEMA, violations

SOURCE = Path(__file__).parents[2] / "ir_samples" / "rnn_loop.onnx"

# A user's config.json: entries on one line and on several, settings ov-loops never writes.
USER_CONFIG = """{
    "model_config_list": [
        {"config": {"name": "other", "base_path": "/models/other", "nireq": 4}},
        {
            "config": {
                "name": "rnn",
                "base_path": "rnn",
                "target_device": "CPU",
                "nireq": 2,
                "plugin_config": {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}
            }
        }
    ],
    "mediapipe_config_list": [{"name": "graph", "base_path": "graph"}],
    "monitoring": {"metrics": {"enable": true, "metrics_list": ["ovms_requests_success"]}}
}
"""


@pytest.fixture(scope="module")
def model() -> ov.Model:
    return ov_loops.convert(SOURCE)


@pytest.fixture(scope="module")
def stateful() -> ov.Model:
    return ov_loops.convert(SOURCE, stateful=True)


def _repository(tmp_path: Path, text: str = USER_CONFIG) -> Path:
    repository = tmp_path / "models"
    repository.mkdir()
    (repository / "config.json").write_text(text)
    return repository


def _files(repository: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repository)): p.read_bytes() for p in repository.rglob("*") if p.is_file()
    }


def _served(repository: Path) -> dict[str, list[int]]:
    """OVMS's repository layout, checked: each entry's base_path (relative to config.json) is
    a directory of versions named by positive integers, each holding one IR (.xml with its
    .bin) that OpenVINO reads; the versions by model name."""
    config = json.loads((repository / "config.json").read_text())
    assert violations(config, CONFIG_SCHEMA) == []
    found = {}
    for item in config["model_config_list"]:
        directory = repository / item["config"]["base_path"]
        if not directory.is_dir():  # another model of the user's, elsewhere
            continue
        numbers = versions(directory)
        assert sorted(p.name for p in directory.iterdir()) == [str(n) for n in numbers]
        for number in numbers:
            (xml,) = (directory / str(number)).glob("*.xml")
            assert xml.with_suffix(".bin").is_file()
            ov.Core().read_model(xml)
        found[item["config"]["name"]] = numbers
    return found


def test_the_schema_checker_rejects_what_ovms_rejects():
    """The checker can fail: each of these breaks OVMS's schema."""
    for broken in (
        {},
        {"model_config_list": [{"config": {"base_path": "x"}}]},
        {"model_config_list": [{"config": {"name": "x", "base_path": "x", "version": 1}}]},
        {"model_config_list": [{"config": {"name": "x", "nireq": -1}}]},
        {"model_config_list": [{"config": {"name": "x", "stateful": "yes"}}]},
        {"model_config_list": [{"config": {"name": "x"}, "extra": 1}]},
        {"model_config_list": [], "models": []},
        {"model_config_list": [{"config": {"name": "x", "model_version_policy": {"newest": {}}}}]},
        {"model_config_list": [], "mediapipe_config_list": [{"name": "g", "graph": "g.pbtxt"}]},
    ):
        assert violations(broken, CONFIG_SCHEMA), broken
    assert violations(json.loads(USER_CONFIG), CONFIG_SCHEMA) == []


def test_a_repository_written_anew_conforms_to_ovms_schema_and_layout(tmp_path, model, stateful):
    repository = tmp_path / "models"
    save_ovms(model, repository, "rnn", False)
    save_ovms(model, repository, "rnn", False)
    save_ovms(stateful, repository, "streaming", False)
    assert _served(repository) == {"rnn": [1, 2], "streaming": [1]}
    config = json.loads((repository / "config.json").read_text())
    assert config == {"model_config_list": [
        {"config": {"name": "rnn", "base_path": "rnn"}},
        {"config": {"name": "streaming", "base_path": "streaming", "stateful": True}},
    ]}  # fmt: skip


def test_a_new_version_of_a_listed_model_leaves_config_json_byte_for_byte(tmp_path, model):
    repository = _repository(tmp_path)
    (repository / "rnn" / "1").mkdir(parents=True)
    (repository / "rnn" / "1" / "old.xml").write_text("<net/>")
    (repository / "rnn" / "1" / "old.bin").write_bytes(b"")
    xml = save_ovms(model, repository, "rnn", False)
    assert xml == repository / "rnn" / "2" / "model.xml"
    assert (repository / "config.json").read_text() == USER_CONFIG
    assert (repository / "rnn" / "1" / "old.xml").read_text() == "<net/>"


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o640])
def test_a_merged_config_json_keeps_its_permissions(tmp_path, model, mode):
    """OVMS's image serves as its own user: a config.json merged into a temporary file's
    0o600 is one the server can no longer read."""
    repository = _repository(tmp_path)
    (repository / "config.json").chmod(mode)
    save_ovms(model, repository, "added", False)
    assert "added" in (repository / "config.json").read_text()
    assert stat.S_IMODE((repository / "config.json").stat().st_mode) == mode


def test_a_config_json_that_is_a_symbolic_link_stays_one(tmp_path, model):
    """A config kept elsewhere and linked into the repository: the link is kept and the file
    it names is merged (replacing the link by a regular file would cut the user's link)."""
    repository = _repository(tmp_path)
    kept = tmp_path / "kept" / "config.json"
    kept.parent.mkdir()
    (repository / "config.json").rename(kept)
    (repository / "config.json").symlink_to(kept)
    save_ovms(model, repository, "added", False)
    assert (repository / "config.json").is_symlink()
    assert "added" in kept.read_text()
    assert "mediapipe_config_list" in kept.read_text()
    assert [p.name for p in kept.parent.iterdir()] == ["config.json"]


def test_a_new_config_json_gets_the_permissions_open_gives(tmp_path, model):
    umask = os.umask(0o027)
    try:
        save_ovms(model, tmp_path / "models", "rnn", False)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "models" / "config.json").stat().st_mode) == 0o640
    assert [p.name for p in (tmp_path / "models").iterdir() if p.name.startswith(".")] == []


def test_a_new_model_is_appended_laid_out_like_the_entry_before_it(tmp_path, model, stateful):
    repository = _repository(tmp_path)
    save_ovms(stateful, repository, "streaming", False)
    added = (
        ',\n        {\n            "config": {\n                "name": "streaming",\n'
        '                "base_path": "streaming",\n                "stateful": true\n'
        "            }\n        }"
    )
    at = USER_CONFIG.index("\n    ],")
    assert (repository / "config.json").read_text() == USER_CONFIG[:at] + added + USER_CONFIG[at:]
    assert _served(repository)["streaming"] == [1]


def test_one_line_configs_stay_one_line(tmp_path, stateful):
    text = '{"model_config_list":[{"config":{"name":"a","base_path":"a"}}],"monitoring":{"metrics":{"enable":false}}}'  # noqa: E501
    repository = _repository(tmp_path, text)
    save_ovms(stateful, repository, "b", False)
    assert (repository / "config.json").read_text() == text.replace(
        "}}]", '}}, {"config": {"name": "b", "base_path": "b", "stateful": true}}]'
    )


@pytest.mark.parametrize(
    "base_path, written",
    [("rnn", "rnn"), ("./rnn", "./rnn"), ("rnn/", "rnn/"), ("/elsewhere/rnn", "rnn"),
     ("s3://bucket/rnn", "rnn")],
)  # fmt: skip
def test_only_a_base_path_naming_another_directory_changes(tmp_path, model, base_path, written):
    repository = _repository(tmp_path, USER_CONFIG.replace('"base_path": "rnn"', json.dumps(
        {"base_path": base_path})[1:-1]))  # fmt: skip
    before = (repository / "config.json").read_text()
    save_ovms(model, repository, "rnn", False)
    after = (repository / "config.json").read_text()
    assert after == before.replace(json.dumps(base_path), json.dumps(written))
    assert json.loads(after)["model_config_list"][1]["config"]["nireq"] == 2


def test_stateful_is_set_for_a_model_with_state_and_dropped_for_one_without(
    tmp_path, model, stateful
):
    repository = _repository(tmp_path)
    save_ovms(stateful, repository, "rnn", False)
    entry = json.loads((repository / "config.json").read_text())["model_config_list"][1]
    assert entry["config"]["stateful"] is True and entry["config"]["nireq"] == 2
    save_ovms(model, repository, "rnn", False)
    assert (repository / "config.json").read_text() == USER_CONFIG
    assert _served(repository)["rnn"] == [1, 2]


def test_the_next_version_is_the_largest_plus_one(tmp_path, model):
    repository = tmp_path / "models"
    for name in ("1", "3", "0", "notes", "007x"):
        (repository / "rnn" / name).mkdir(parents=True)
    assert save_ovms(model, repository, "rnn", False).parent.name == "4"
    assert save_ovms(model, repository, "rnn", False, version=9).parent.name == "9"
    assert versions(repository / "rnn") == [1, 3, 4, 9]


def test_an_existing_version_is_refused_and_nothing_is_written(tmp_path, model, stateful):
    repository = _repository(tmp_path)
    save_ovms(model, repository, "rnn", False)
    files = _files(repository)
    with pytest.raises(InputError, match="version 1 of 'rnn' exists; --overwrite") as refused:
        save_ovms(stateful, repository, "rnn", False, version=1)
    assert "\n" not in str(refused.value)
    assert _files(repository) == files
    assert sorted(p.name for p in repository.iterdir()) == ["config.json", "rnn"]


def test_overwrite_replaces_the_whole_version_directory(tmp_path, model, stateful):
    repository = _repository(tmp_path)
    save_ovms(model, repository, "rnn", False)
    (repository / "rnn" / "1" / "stale.xml").write_text("<net/>")
    save_ovms(stateful, repository, "rnn", False, version=1, overwrite=True)
    assert sorted(p.name for p in (repository / "rnn" / "1").iterdir()) == [
        "model.bin", "model.xml"]  # fmt: skip
    assert 'type="Assign"' in (repository / "rnn" / "1" / "model.xml").read_text()
    assert _served(repository)["rnn"] == [1]
    assert sorted(p.name for p in repository.iterdir()) == ["config.json", "rnn"]  # no scratch


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("{", "not valid JSON"),
        ('{"model_config_list": []} x', "not valid JSON"),
        ("[1, 2]", "the top level is not an object"),
        ('{"model_config_list": {}}', "model_config_list is not a list"),
        ('{"model_config_list": [1]}', "model_config_list[0] is not"),
        ('{"model_config_list": [{"name": "a", "base_path": "a"}]}', "model_config_list[0]"),
        ('{"model_config_list": [{"config": {"name": 3}}]}', "model_config_list[0]"),
        (b"\xff\xfe{}", "cannot read"),
    ],
)
def test_a_config_json_that_is_not_ovms_shaped_is_refused_in_one_line(
    tmp_path, model, text, fragment
):
    repository = tmp_path / "models"
    repository.mkdir()
    path = repository / "config.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError, match="config.json") as refused:
        save_ovms(model, repository, "rnn", False)
    assert fragment in str(refused.value) and "\n" not in str(refused.value)
    assert [p.name for p in repository.iterdir()] == ["config.json"]


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", ".hidden"])
def test_a_model_name_is_one_directory_name(tmp_path, model, name):
    with pytest.raises(InputError, match="--model_name"):
        save_ovms(model, tmp_path, name, False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("version", [0, -2])
def test_a_version_is_a_positive_integer(tmp_path, model, version):
    with pytest.raises(InputError, match="a positive integer"):
        save_ovms(model, tmp_path, "rnn", False, version=version)
    assert list(tmp_path.iterdir()) == []


def test_a_version_policy_that_will_not_serve_the_version_is_a_warning(tmp_path, model, caplog):
    text = USER_CONFIG.replace(
        '"nireq": 2,', '"nireq": 2, "model_version_policy": {"specific": {"versions": [1]}},'
    )
    repository = _repository(tmp_path, text)
    (repository / "rnn" / "1").mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="ov_loops"):
        save_ovms(model, repository, "rnn", False)
    assert "serves versions [1] only: version 2 is written" in caplog.text
    assert (repository / "config.json").read_text() == text


def test_cli_model_name_and_version(tmp_path):
    repository = _repository(tmp_path)
    args = ("convert", str(SOURCE), "-o", str(repository), "--layout", "ovms")
    result = run_cli(*args, "--model_name", "rnn", "--model_version", "5")
    assert result.returncode == 0, result.stderr
    assert f"wrote {repository / 'rnn' / '5' / 'model.xml'} " in result.stdout
    assert (repository / "config.json").read_text() == USER_CONFIG
    files = _files(repository)
    again = run_cli(*args, "--model-name", "rnn", "--model-version", "5")
    assert_one_line_error(again, 2, "version 5 of 'rnn' exists", "--overwrite")
    assert _files(repository) == files
    result = run_cli(*args, "--model_name", "rnn", "--model_version", "5", "--overwrite")
    assert result.returncode == 0, result.stderr
    assert _served(repository) == {"rnn": [5]}


def test_cli_refuses_an_xml_path_as_the_repository(tmp_path):
    """-o repo/x.xml --layout ovms: the repository is a directory; refused rather than guessed
    (a directory named x.xml, or the model renamed, would both surprise)."""
    result = run_cli(
        "convert", str(SOURCE), "-o", str(tmp_path / "repo" / "x.xml"), "--layout", "ovms"
    )
    assert_one_line_error(result, 2, "x.xml: --layout ovms writes a repository directory")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "option", [["--model_name", "x"], ["--model_version", "2"], ["--overwrite"]]
)
def test_cli_refuses_repository_options_without_layout_ovms(tmp_path, option):
    result = run_cli("convert", str(SOURCE), "-o", str(tmp_path / "o.xml"), *option)
    assert_one_line_error(result, 2, f"{option[0]} is an option of --layout ovms")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "text, edited",
    [
        ('{"a": 1, "stateful": true, "b": 2}', '{"a": 1, "b": 2}'),
        ('{"stateful": true, "a": 1}', '{"a": 1}'),
        ('{"a": 1, "stateful": true}', '{"a": 1}'),
        ('{\n  "stateful": true,\n  "a": 1\n}', '{\n  "a": 1\n}'),
        ('{\n  "a": 1,\n  "stateful": true\n}', '{\n  "a": 1\n}'),
        ('{ "stateful" : true }', "{ }"),
    ],
)
def test_removing_a_member_takes_its_comma_and_nothing_else(text, edited):
    assert remove_member(text, (), "stateful") == edited
    assert json.loads(edited) == {k: v for k, v in json.loads(text).items() if k != "stateful"}


@pytest.mark.parametrize(
    "text, edited",
    [
        ('{"a":1}', '{"a":1, "k":"v"}'),
        ('{"a" : 1, "k": 0}', '{"a" : 1, "k": "v"}'),
        ('{\n\t"a": 1\n}', '{\n\t"a": 1,\n\t"k": "v"\n}'),
    ],
)
def test_setting_a_member_copies_the_layout_of_the_first(text, edited):
    assert set_member(text, (), "k", "v") == edited
    assert set_member('{"x": [{"a": 1}]}', ("x", 0), "a", [2]) == '{"x": [{"a": [2]}]}'


def test_a_version_that_appears_while_converting_is_never_replaced(tmp_path, model, monkeypatch):
    """Another conversion writes version 1 between our choice of it and our rename: ours is
    refused and theirs kept (config.json untouched)."""
    import ov_loops.serving.repository

    repository = _repository(tmp_path)
    original = ov_loops.serving.repository.stage

    def racing_stage(*args, **kwargs):
        staged = original(*args, **kwargs)
        (repository / "rnn" / "1").mkdir()
        (repository / "rnn" / "1" / "theirs.xml").write_text("<net/>")
        return staged

    monkeypatch.setattr(ov_loops.serving.repository, "stage", racing_stage)
    with pytest.raises(InputError, match="version 1 of 'rnn' exists"):
        save_ovms(model, repository, "rnn", False)
    assert sorted(_files(repository)) == ["config.json", "rnn/1/theirs.xml"]
    assert (repository / "config.json").read_text() == USER_CONFIG
