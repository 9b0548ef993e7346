"""Shared set-up for the tests of ``examples/``.

The example plugins are user code, not part of the package: they are imported the way
the CLI imports them, as top-level modules from the ``examples/`` folder put on
``sys.path``. The fixtures build a profile's Framework from an example configuration
file, and run ``kubesched simulate`` in-process.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from kubesched.cli import main
from kubesched.config import load_config
from kubesched.framework.runtime import Framework
from kubesched.framework.snapshot import Snapshot
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))


@pytest.fixture
def framework_for() -> Callable[..., Framework]:
    """``framework_for("config-gpu.yaml", "gpu-aware", nodes, pods, seed=1)``: the
    Framework of that profile of an example configuration, over a snapshot of
    ``nodes`` with ``pods`` bound to them."""

    def build(
        config: str,
        scheduler_name: str,
        nodes: Sequence[Node] = (),
        pods: Sequence[Pod] = (),
        seed: int = 0,
    ) -> Framework:
        loaded = load_config(EXAMPLES / config)
        profile = next(p for p in loaded.profiles if p.scheduler_name == scheduler_name)
        return Framework(
            profile,
            in_tree_registry(),
            snapshot=Snapshot.from_objects(nodes, pods),
            rng=random.Random(seed),
        )

    return build


@pytest.fixture
def simulate(capsys: pytest.CaptureFixture[str]) -> Callable[..., dict[str, Any]]:
    """``simulate("pods-gpu.yaml", "config-gpu.yaml", seed=1)``: run ``kubesched
    simulate --output json`` in-process on the example cluster and return its JSON.
    File names are relative to ``examples/`` unless absolute; ``config=None`` runs the
    default profile."""

    def run(
        pods: str | Path,
        config: str | Path | None,
        seed: int = 1,
        cluster: str | Path = "cluster.yaml",
    ) -> dict[str, Any]:
        argv = ["simulate", "--cluster", str(EXAMPLES / cluster), "--pods", str(EXAMPLES / pods)]
        if config is not None:
            argv += ["--config", str(EXAMPLES / config)]
        argv += ["--seed", str(seed), "--output", "json"]
        capsys.readouterr()  # drop anything printed before
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, err
        result: dict[str, Any] = json.loads(out)
        return result

    return run
