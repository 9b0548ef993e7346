"""Fixtures for the fuzz tests: puts this folder on ``sys.path`` (for the ``fuzz_*``
helpers; with ``--import-mode=importlib`` pytest does not) and prints how many examples
ran, and how fast, at the end of the session (``bench/fuzz.py`` reads that line)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import fuzz_profile  # noqa: E402


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = fuzz_profile.summary()
    if line:
        terminalreporter.write_line(line)
