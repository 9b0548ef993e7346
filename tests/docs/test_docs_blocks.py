"""The code in ``docs/*.md`` runs, so the docs cannot rot.

* Every fenced block tagged ``python`` is a complete program: it runs in a fresh
  interpreter, from the repository root (the docs' paths are relative to it), and must
  exit 0 — the blocks assert what they claim.
* Every ``sh`` block line that starts with ``kubesched simulate``, ``kubesched explain`` or
  ``kubesched bench`` (continuation lines joined) runs through the installed ``kubesched``
  command and must exit 0. Other ``sh`` lines (kubectl, pip, servers) are not run.
* Blocks tagged ``text``, ``yaml`` or ``json`` are illustrative and not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RUNNABLE_COMMANDS = ("kubesched simulate", "kubesched explain", "kubesched bench")
BENCH_SIZES = ("--nodes", "--init-pods", "--pods")
_FENCE = re.compile(r"^```(\w*)\s*$")


class Block(NamedTuple):
    file: str
    line: int
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def code_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with the line each starts on."""
    blocks: list[Block] = []
    lang: str | None = None
    start = 0
    lines: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _FENCE.match(line)
        if lang is None and match:
            lang, start, lines = match.group(1), number, []
        elif lang is not None and line.strip() == "```":
            blocks.append(Block(path.name, start, lang, "\n".join(lines) + "\n"))
            lang = None
        elif lang is not None:
            lines.append(line)
    assert lang is None, f"{path.name}:{start}: code block never closed"
    return blocks


def shell_commands(code: str) -> list[str]:
    """The kubesched commands of a ``sh`` block that this test runs."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return [
        line.strip() for line in joined.splitlines() if line.strip().startswith(RUNNABLE_COMMANDS)
    ]


ALL_BLOCKS = [block for path in sorted(DOCS.glob("*.md")) for block in code_blocks(path)]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "python"]
COMMANDS = [(b, cmd) for b in ALL_BLOCKS if b.lang == "sh" for cmd in shell_commands(b.code)]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def test_docs_have_code_to_check() -> None:
    assert len(PYTHON_BLOCKS) >= 8
    assert len(COMMANDS) >= 4


def test_every_block_has_a_language() -> None:
    untagged = [b.id for b in ALL_BLOCKS if not b.lang]
    assert not untagged, f"tag these blocks (python, sh, text, yaml, json): {untagged}"


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=[b.id for b in PYTHON_BLOCKS])
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    env = _env()
    env["TMPDIR"] = str(tmp_path)  # what a block writes to a temporary folder lands here
    result = subprocess.run(
        [sys.executable, "-c", block.code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"{block.id} failed:\n{result.stderr}"


@pytest.mark.parametrize(
    ("block", "command"), COMMANDS, ids=[f"{b.id}:{c.split()[1]}" for b, c in COMMANDS]
)
def test_cli_command_runs(block: Block, command: str) -> None:
    argv = shlex.split(command)
    if argv[1] == "bench":
        # The defaults are thousands of nodes: a docs example must say its (small) sizes.
        sizes = {flag: int(argv[argv.index(flag) + 1]) for flag in BENCH_SIZES if flag in argv}
        assert set(sizes) == set(BENCH_SIZES), f"{block.id}: give bench {BENCH_SIZES}"
        assert max(sizes.values()) <= 500, f"{block.id}: keep bench sizes small: {sizes}"
    result = subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{block.id}: {command}\n{result.stderr}"
    assert result.stdout.strip(), f"{block.id}: {command} printed nothing"


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings."""
    anchors = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists() or (anchor and anchor not in _anchors(resolved)):
            broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"
