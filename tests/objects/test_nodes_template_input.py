"""A node template that is not UTF-8, or whose YAML aliases explode, is one
NodeTemplateError naming the file (``kubesched apiserver --node-template``), not a
traceback or a minutes-long walk."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.objects.nodes import NodeTemplateError, load_template

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"kind: Node\nmetadata: {name: caf\xe9}\n", "byte 31: invalid UTF-8 (0xe9)"),
        (LAUGHS.encode(), "is not valid YAML: document contains excessive aliasing"),
        (b"a: &a [1, *a]\n", "is not valid YAML: document contains a cycle of aliases"),
    ],
    ids=["latin-1", "billion-laughs", "alias-cycle"],
)
def test_a_template_that_cannot_be_read_names_the_file(
    tmp_path: Path, raw: bytes, words: str
) -> None:
    path = tmp_path / "node.yaml"
    path.write_bytes(raw)
    with pytest.raises(NodeTemplateError) as failure:
        load_template(path)
    assert str(path) in str(failure.value)
    assert words in str(failure.value)
