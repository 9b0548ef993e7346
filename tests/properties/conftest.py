"""Puts this folder on ``sys.path`` so the property tests can import their helper modules
(``prop_model``, ``prop_reference``): with ``--import-mode=importlib`` pytest does not."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
