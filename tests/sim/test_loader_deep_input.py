"""Cluster, pod and configuration files nested too deeply, or holding lone surrogates:
one line naming the file (exit 2), never a RecursionError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.objects.jsontext import MAX_DEPTH
from kubesched.sim.files import load_objects
from kubesched.testing import make_node

DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("deep.json", '{"kind":"Node","metadata":{"labels":' + DEEP + "}}", "invalid JSON"),
        ("deep.yaml", "kind: Node\nmetadata:\n  labels: " + DEEP + "\n", "invalid YAML"),
    ],
)
@pytest.mark.parametrize("role", ["--cluster", "--pods", "--config"])
def test_deep_nesting_is_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, words: str, role: str
) -> None:
    good = tmp_path / "cluster.yaml"
    good.write_text(yaml.safe_dump(make_node("n1").capacity(cpu="1").dict()))
    bad = tmp_path / name
    bad.write_text(text)
    args = ["simulate", "--cluster", str(bad if role == "--cluster" else good)]
    if role != "--cluster":
        args += [role, str(bad)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{bad}: {words}: exceeded max depth of {MAX_DEPTH}" in err


def test_a_lone_surrogate_in_a_json_cluster_file_becomes_a_replacement_character(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(
        '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1",'
        '"annotations":{"note":"a\\ud800b"}},"status":{"allocatable":{"cpu":"1"}}}'
    )
    (node,) = load_objects(path).nodes
    assert node.name == "n1"


#: A "billion laughs": nine levels of nine aliases, 9**9 values from 100 written.
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (LAUGHS, "invalid YAML: document contains excessive aliasing: 49032905"),
        ("a: &a [1, *a]\n", "invalid YAML: document contains a cycle of aliases"),
    ],
    ids=["billion-laughs", "alias-cycle"],
)
@pytest.mark.parametrize("role", ["--cluster", "--pods", "--config"])
def test_yaml_aliases_that_explode_are_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, words: str, role: str
) -> None:
    # Found by tests/fuzz: the loaders walked all 9**9 values (22 s; a tenth level would
    # have taken minutes).
    good = tmp_path / "cluster.yaml"
    good.write_text(yaml.safe_dump(make_node("n1").capacity(cpu="1").dict()))
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    args = ["simulate", "--cluster", str(bad if role == "--cluster" else good)]
    if role != "--cluster":
        args += [role, str(bad)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{bad}: {words}" in err


def test_aliases_that_repeat_a_little_are_read(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: &l {zone: a}\n"
        "  annotations: *l\nstatus:\n  allocatable: {cpu: '1'}\n"
    )
    (node,) = load_objects(path).nodes
    assert node.labels == {"zone": "a"}
