"""Files for the loaders: documents written as YAML or JSON (one object, a ``List``,
several YAML documents), sometimes damaged as text (tabs, NUL, a BOM, bytes that are not
UTF-8, YAML tags and aliases); and ``kubesched simulate`` run on them in-process, held
to the CLI's contract: exit 0, or exit 2 with every line of the error naming the file."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import fuzz_profile
import yaml
from fuzz_values import byte_position
from hypothesis import strategies as st

from kubesched.cli import main

#: Text that YAML readers have tripped on: tags, aliases (one that nests 9 deep, 9 wide),
#: merge keys, tabs, a document end mid-file, duplicate keys.
YAML_DAMAGE = (
    "!!python/object/apply:os.system ['true']\n",
    "a: &a [1, 2]\nb: *a\n",
    "a: &a ['x','x','x','x','x','x','x','x','x']\n"
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
        for i in range(8)
    ),
    "<<: {kind: Pod}\n",
    "\tkind: Pod\n",
    "...\n",
    "kind: Pod\nkind: Node\n",
    "? [a, b]\n: c\n",
    "key: !!binary aGVsbG8=\n",
    "when: 2026-01-01\n",
    "n: .inf\n",
    "%YAML 1.1\n---\n",
    "- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n",
    "[" * 300 + "]" * 300 + "\n",
)


def dump(documents: list[Any], how: str) -> str:
    """``documents`` as one file: YAML documents, a JSON ``List``, or one JSON object."""
    if how == "json-list":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}, indent=1)
    if how == "json" and len(documents) == 1:
        return json.dumps(documents[0])
    return yaml.safe_dump_all(documents, allow_unicode=True, sort_keys=False)


@st.composite
def damaged_text(draw: st.DrawFn, text: str) -> bytes:
    """``text`` as file bytes, now and then damaged."""
    raw = text.encode("utf-8", "surrogatepass")
    how = draw(
        st.sampled_from(
            ("none", "none", "none", "none", "cut", "byte", "yaml", "nul", "bom", "latin1")
        )
    )
    if how == "cut" and raw:
        return raw[: byte_position(draw, len(raw))]
    if how == "byte" and raw:
        at = byte_position(draw, len(raw))
        return raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    if how == "yaml":
        return raw + b"\n---\n" + draw(st.sampled_from(YAML_DAMAGE)).encode()
    if how == "nul":
        return raw.replace(b":", b":\x00", 1)
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how == "latin1":
        return raw + b"\nname: caf\xe9\n"
    return raw


def simulate(argv: list[str], files: list[Path]) -> tuple[int, str]:
    """Run ``kubesched`` in-process; check its exit code and error lines; return both."""
    fuzz_profile.count()
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(argv)
    text = err.getvalue()
    assert code in (0, 2), f"kubesched {' '.join(argv)}: exit {code}\n{text[-3000:]}"
    if code == 2:
        lines = [line for line in text.splitlines() if line.strip()]
        assert lines, f"kubesched {' '.join(argv)}: exit 2 with nothing said"
        names = [str(f) for f in files]
        for line in lines:
            assert any(name in line for name in names), (
                f"kubesched {' '.join(argv)}: an error line that names no file: {line[:500]!r}\n"
                f"(all of stderr: {text[-3000:]})"
            )
    return code, text
