"""scheduler_perf's dra workloads in ``kubesched bench``, small: devices run out when no
pod ends, churn frees them, and a shared claim is allocated once for all its pods."""

from __future__ import annotations

from kubesched.config.defaults import default_config
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import run_bench
from kubesched.sim.draworkloads import DEVICES_PER_NODE


def test_claim_template_pods_stop_when_the_devices_run_out() -> None:
    devices = 3 * DEVICES_PER_NODE
    result = run_bench("dra-claim-template", 3, 20, 20, default_config(), in_tree_registry())
    assert result.scheduled == devices - 20


def test_steady_state_churn_frees_devices_for_the_next_pods() -> None:
    result = run_bench("dra-steady-state", 3, 20, 40, default_config(), in_tree_registry())
    assert result.scheduled == 40


def test_shared_claims_are_allocated_once() -> None:
    # 20 pods share 2 claims: 2 devices for 20 pods on 1 node.
    result = run_bench("dra-shared-claim", 1, 10, 10, default_config(), in_tree_registry())
    assert result.scheduled == 10
