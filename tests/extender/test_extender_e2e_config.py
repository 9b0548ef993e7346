"""How a configuration's ``extenders`` reach the parts that schedule: the profiles'
NodeResourcesFit args (ignoredByScheduler), the queue's events, the commands that run
a scheduler and the simulator that refuses them."""

from __future__ import annotations

import random
from pathlib import Path

from kubesched.cli import main as kubesched
from kubesched.config import loads_config
from kubesched.extender.client import RawStore
from kubesched.extender.client_schedule import ExtenderSet, with_ignored_extended_resources
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import EXTENDER_NAME
from kubesched.framework.handle import NoClient, Nominator, StaticClusterLister
from kubesched.framework.interface import Status
from kubesched.framework.runtime import WILDCARD_EVENT, Framework
from kubesched.framework.schedule import build_profiles
from kubesched.framework.types import NodeInfo
from kubesched.objects.node import Node
from kubesched.objects.pod import Pod
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.cli import main as run_main
from kubesched.testing import make_node, make_pod

HEADER = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
"""
EXTENDERS = """extenders:
- urlPrefix: http://127.0.0.1:1
  filterVerb: filter
  managedResources:
  - {name: example.com/gadget, ignoredByScheduler: true}
  - {name: example.com/widget}
- urlPrefix: http://127.0.0.1:2
  prioritizeVerb: prioritize
  weight: 1
  managedResources:
  - {name: example.com/sprocket, ignoredByScheduler: true}
"""
PROFILES = """profiles:
- schedulerName: own-args
  pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/other]
      ignoredResourceGroups: [vendor.io]
- schedulerName: default-args
"""


def frameworks(text: str) -> dict[str, Framework]:
    """The profiles of ``text`` as the live scheduler builds them (extenders' ignored
    resources applied), not yet given their extenders."""
    config = with_ignored_extended_resources(loads_config(text, "c.yaml"))
    built, _ = build_profiles(
        config,
        in_tree_registry(),
        cluster=StaticClusterLister(),
        client=NoClient(),
        nominator=Nominator(),
        rng=random.Random(0),
    )
    return built


def fit_status(fwk: Framework, pod: Pod, node: Node) -> Status | None:
    fit = fwk.plugins["NodeResourcesFit"]
    state = CycleState()
    fit.pre_filter(state, pod, [])
    return fit.filter(state, pod, NodeInfo(node))


def test_ignored_by_scheduler_resources_replace_the_fit_plugins_ignored_resources():
    config = with_ignored_extended_resources(loads_config(HEADER + EXTENDERS + PROFILES, "c"))
    for profile in config.profiles:
        args = profile.plugin_args("NodeResourcesFit")
        assert args is not None
        # Upstream's buildExtenders assigns the list: the extenders' setting wins.
        assert args.args["ignoredResources"] == ["example.com/gadget", "example.com/sprocket"]
    own = config.profiles[0].plugin_args("NodeResourcesFit")
    assert own is not None and own.args["ignoredResourceGroups"] == ["vendor.io"]
    plain = loads_config(HEADER + PROFILES, "c")
    assert with_ignored_extended_resources(plain) is plain


def test_a_pod_asking_for_ignored_resources_fits_a_node_without_them():
    node = make_node("n").capacity(cpu="4", memory="8Gi", pods="10").obj()
    gadget = make_pod("p").req(cpu="1", **{"example.com/gadget": "2"}).obj()
    widget = make_pod("w").req(cpu="1", **{"example.com/widget": "2"}).obj()
    for fwk in frameworks(HEADER + EXTENDERS + PROFILES).values():
        assert fit_status(fwk, gadget, node) is None
        # Managed but not ignoredByScheduler: still checked.
        status = fit_status(fwk, widget, node)
        assert status is not None and status.message == "Insufficient example.com/widget"
    without = frameworks(HEADER + PROFILES)["default-args"]
    status = fit_status(without, gadget, node)
    assert status is not None and status.message == "Insufficient example.com/gadget"


def test_a_profile_with_extenders_requeues_their_rejections_on_any_event():
    config = loads_config(HEADER + EXTENDERS, "c.yaml")
    assert (
        EXTENDER_NAME
        not in frameworks(HEADER + EXTENDERS)["default-scheduler"].events_to_register()
    )
    fwk = frameworks(HEADER + EXTENDERS)["default-scheduler"]
    fwk.extenders = ExtenderSet.from_config(config.extenders, RawStore())
    registered = fwk.events_to_register()
    assert [r.event for r in registered[EXTENDER_NAME]] == [WILDCARD_EVENT]


def test_extenders_are_called_in_order_with_the_ignorable_ones_last():
    text = HEADER + EXTENDERS.replace("filterVerb: filter", "filterVerb: filter\n  ignorable: true")
    extenders = ExtenderSet.from_config(loads_config(text, "c.yaml").extenders, RawStore())
    assert [e.name for e in extenders.extenders] == ["http://127.0.0.1:2", "http://127.0.0.1:1"]


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def test_simulate_and_explain_refuse_a_configuration_with_extenders(tmp_path, capsys):
    config = write_config(tmp_path, HEADER + EXTENDERS)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
        "  metadata: {name: n}\n  status: {allocatable: {cpu: '1', memory: 1Gi, pods: '5'}}\n"
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
        "spec: {containers: [{name: c, image: x}]}\n"
    )
    for argv in (
        ["simulate", "--cluster", str(cluster), "--pods", str(pod)],
        ["explain", "--cluster", str(cluster), "--pod", str(pod)],
    ):
        code = kubesched([*argv, "--config", str(config)])
        err = capsys.readouterr().err
        assert code != 0
        assert str(config) in err
        assert "extenders" in err and "the simulator does not call extenders" in err


def test_run_reports_an_unusable_extender_configuration(tmp_path, capsys):
    text = HEADER + (
        "leaderElection: {leaderElect: false}\n"
        "extenders:\n- urlPrefix: https://127.0.0.1:1\n  filterVerb: filter\n"
        "  enableHTTPS: true\n  tlsConfig: {caFile: /nonexistent/ca.pem}\n"
    )
    config = write_config(tmp_path, text)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1'}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
        "users:\n- name: u\n  user: {}\n"
    )
    code = run_main(["--config", str(config), "--kubeconfig", str(kubeconfig)])
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        "kubesched run: extender https://127.0.0.1:1: tlsConfig.caFile: "
        "cannot read /nonexistent/ca.pem: No such file or directory\n"
    )
