"""What the lab commands print for people: rich tables on a terminal, the plain columns
when piped or with NO_COLOR, and a progress bar on stderr for long runs on a terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import terminal
from kubesched.testing import make_node, make_pod

ESC = "\x1b["


def write(path: Path, *objs: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(list(objs)))
    return path


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    cluster = write(
        tmp_path / "c.yaml",
        *[
            make_node(f"n{i}").capacity(cpu="64", memory="64Gi", pods="110").dict()
            for i in range(3)
        ],
    )
    pods = write(
        tmp_path / "p.yaml", *[make_pod(f"p{i}").req(cpu="100m").dict() for i in range(220)]
    )
    return ["simulate", "--cluster", str(cluster), "--pods", str(pods), "--seed", "1"]


def run_on_terminal(argv: list[str], **env: str) -> tuple[str, str]:
    """Run kubesched with stdout and stderr each on a pseudo-terminal of its own."""
    masters, slaves = zip(*(pty.openpty() for _ in range(2)), strict=True)
    chunks: list[list[bytes]] = [[], []]

    def drain(fd: int, into: list[bytes]) -> None:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the other end closed
                return
            if not data:
                return
            into.append(data)

    readers = [
        threading.Thread(target=drain, args=(m, c)) for m, c in zip(masters, chunks, strict=True)
    ]
    for reader in readers:
        reader.start()
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    environ.update({"TERM": "xterm-256color", "COLUMNS": "160", **env})
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", *argv],
        stdin=subprocess.DEVNULL,
        stdout=slaves[0],
        stderr=slaves[1],
        env=environ,
        timeout=120,
        check=False,
    )
    for fd in slaves:
        os.close(fd)
    for reader in readers:
        reader.join(timeout=30)
    for fd in masters:
        os.close(fd)
    assert proc.returncode == 0
    return b"".join(chunks[0]).decode(), b"".join(chunks[1]).decode()


def test_a_terminal_gets_rich_tables_and_a_progress_bar(files: list[str]) -> None:
    out, err = run_on_terminal(files)
    assert ESC in out
    assert "┏" in out and "Placements" in out
    assert "220 scheduled" in out
    assert "scheduling" in err  # the progress bar, drawn on stderr


def test_no_color_on_a_terminal_gives_the_plain_columns(files: list[str]) -> None:
    out, err = run_on_terminal(files, NO_COLOR="1")
    assert ESC not in out and ESC not in err
    assert out.startswith("POD")
    assert "220 scheduled, 0 unschedulable, 0 preempted, of 220 pods" in out


def test_a_pipe_gets_the_plain_columns_and_no_bar(files: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched.cli", *files],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert ESC not in proc.stdout and proc.stderr == ""
    assert proc.stdout.splitlines()[0].split() == ["POD", "NODE", "NOTE"]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_names_are_never_read_as_rich_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    data = {
        "kind": "CapacityReport",
        "shapes": [
            {
                "name": "[bold]x[/bold]",
                "sentence": "The cluster can schedule 1 instance(s) of the pod [bold]x[/bold].",
                "stopReason": "[red]r",
                "perNode": [{"node": "[link=file:///etc]n[/link]", "count": 1, "limit": "[/]"}],
            }
        ],
        "mix": None,
    }
    stream = FakeTerminal()
    terminal.show(data, lambda: "plain", stream)
    text = stream.getvalue()
    assert "of the pod [bold]x[/bold]." in text
    assert "[link=file:///etc]n[/link]" in text
    assert "[/]" in text
