"""load_config: files in, every problem out, each line naming the file and the field."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kubesched.config import ConfigError, default_config, load_config, loads_config

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert caught.value.source == str(path)
    prefix = f"{path}: "
    lines = str(caught.value).splitlines()
    assert all(line.startswith(prefix) for line in lines)
    return [line.removeprefix(prefix) for line in lines]


def test_a_minimal_file_gives_the_default_configuration(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER)
    assert load_config(path) == dataclasses.replace(default_config(), source=str(path))


def test_a_file_with_many_mistakes_reports_all_of_them_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEADER
        + """\
parallelism: 0
percentageOfNodesToScore: 101
leaderElection:
  leaseDuration: 15
profiles:
  - schedulerName: a
    pluginConfig:
      - name: PodTopologySpread
        args: {defaultConstraints: []}
      - name: PodTopologySpread
  - schedulerName: a
    plugins:
      score:
        enabled:
          - name: ImageLocality
            weigth: 3
extenders:
  - urlPrefix: http://a
    bindVerb: bind
  - urlPrefix: http://b
    bindVerb: bind
""",
    )
    assert problems(path) == [
        'leaderElection.leaseDuration: Invalid value: 15: must be a duration string like "5s", '
        '"500ms" or "1m30s"',
        'profiles[1].plugins.score.enabled[0]: unknown field "weigth"',
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
        'profiles[0].pluginConfig[1]: Duplicate value: "PodTopologySpread"',
        'profiles[1].schedulerName: Duplicate value: "a"',
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
        'extenders: Invalid value: "found 2 extenders implementing bind": '
        "only one extender can implement bind",
    ]


def test_a_yaml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "parallelism: 4: 5\n")
    assert problems(path) == [
        "invalid YAML: line 3, column 15: mapping values are not allowed here"
    ]


def test_several_yaml_documents_are_a_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "---\n" + HEADER)
    [problem] = problems(path)
    assert problem.startswith("invalid YAML: line 3, column 1: ")


def test_a_key_written_twice_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "parallelism: 4\nparallelism: 8\n")
    assert problems(path) == ['line 4, column 1: key "parallelism" already set in map']


def test_a_json_file_is_read_as_json(tmp_path: Path) -> None:
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "parallelism": 4,
        "profiles": [{"schedulerName": "json-scheduler"}],
    }
    config = load_config(write(tmp_path, json.dumps(document, indent="\t"), "config.json"))
    assert config.parallelism == 4
    assert [p.scheduler_name for p in config.profiles] == ["json-scheduler"]


def test_json_in_a_yaml_file_is_recognised_even_with_tabs(tmp_path: Path) -> None:
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "parallelism": 3,
    }
    config = load_config(write(tmp_path, json.dumps(document, indent="\t")))
    assert config.parallelism == 3


def test_a_yaml_flow_mapping_is_still_yaml(tmp_path: Path) -> None:
    text = "{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}"
    assert load_config(write(tmp_path, text)).parallelism == 16


def test_a_json_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '{"apiVersion": "x",\n "kind": }', "config.json")
    assert problems(path) == ["invalid JSON: line 2, column 10: Expecting value"]


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    [problem] = problems(tmp_path / "absent.yaml")
    assert problem == "cannot read the file: No such file or directory"


def test_an_empty_file_lacks_its_type_meta(tmp_path: Path) -> None:
    assert problems(write(tmp_path, "")) == ["apiVersion: Required value", "kind: Required value"]


def test_loads_config_reads_text() -> None:
    config = loads_config(HEADER + "profiles:\n- schedulerName: x\n- schedulerName: y\n", "inline")
    assert [p.scheduler_name for p in config.profiles] == ["x", "y"]
    assert config.source == "inline"
