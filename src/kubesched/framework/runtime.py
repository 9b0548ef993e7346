"""The profile runner: builds a profile's plugins and runs each extension point.

Mirrors upstream's ``pkg/scheduler/framework/runtime/framework.go``: plugins are made
from the registry with their pluginConfig args, placed at the extension points the
profile enables (multiPoint expanded by what each plugin implements, explicit settings
taking precedence), score weights applied (0 means 1), and every run method applies
upstream's rules for Skip, Unschedulable and Error.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from kubesched.config import FieldError, Profile
from kubesched.framework.args import ArgsError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.extender import EXTENDER_NAME, ExtenderAwarePostFilter, Extenders
from kubesched.framework.handle import (
    ClusterClient,
    ClusterLister,
    NoClient,
    Nominator,
    PodNominator,
    StaticClusterLister,
)
from kubesched.framework.interface import (
    EXTENSION_POINT_PROTOCOLS,
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    ActionType,
    BindPlugin,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    EnqueueExtensions,
    EventResource,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PodGroupInfo,
    PodGroupPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreBindPreFlightPlugin,
    PreemptionPlanner,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from kubesched.framework.registry import Registry, RegistryError
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, NodeScore, NodeToStatus, PodInfo, QueuedPodInfo
from kubesched.framework.waiting_pods import (
    MAX_PERMIT_WAIT,
    WaitingPod,
    WaitingPodsMap,
    waiting_pod_key,
)
from kubesched.objects.pod import Pod

#: Config attribute of each extension point, with its wire name, in upstream order.
_POINTS: tuple[tuple[str, str], ...] = (
    ("pre_enqueue", "preEnqueue"),
    ("queue_sort", "queueSort"),
    ("pre_filter", "preFilter"),
    ("filter", "filter"),
    ("post_filter", "postFilter"),
    ("pre_score", "preScore"),
    ("score", "score"),
    ("reserve", "reserve"),
    ("permit", "permit"),
    ("pre_bind", "preBind"),
    ("bind", "bind"),
    ("post_bind", "postBind"),
)
_PROTOCOL_NAMES = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}
#: Only plugins that can reject a pod register the events that may admit it again.
_REJECTING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")

WILDCARD_EVENT = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)
_SKIP = Status.skip()
_NO_PLUGINS: frozenset[str] = frozenset()

_now = time.perf_counter


class MetricsRecorder(Protocol):
    """Where a Framework reports how long its extension points and plugins took
    (upstream's ``framework_extension_point_duration_seconds`` and, for the cycles
    whose CycleState says ``record_plugin_metrics``, ``plugin_execution_duration_seconds``)."""

    def extension_point(
        self, point: str, status: Status | None, profile: str, seconds: float
    ) -> None: ...

    def plugin_execution(
        self, plugin: str, point: str, status: Status | None, seconds: float
    ) -> None: ...


_F = TypeVar("_F", bound=Callable[..., Any])


def _timed(point: str, status_at: int | None = None) -> Callable[[_F], _F]:
    """Time a run method as extension point ``point`` when the framework has a
    recorder; ``status_at``: where the Status is in a tuple result."""

    def wrap(method: _F) -> _F:
        @functools.wraps(method)
        def run(self: Framework, *args: Any) -> Any:
            recorder = self.recorder
            if recorder is None:
                return method(self, *args)
            start = _now()
            result = method(self, *args)
            status = result if status_at is None else result[status_at]
            recorder.extension_point(point, status, self.profile_name, _now() - start)
            return result

        return run  # type: ignore[return-value]

    return wrap


class ProfileError(Exception):
    """A profile that cannot be built; carries field errors with config paths."""

    def __init__(self, errors: Sequence[FieldError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = list(errors)


class Framework:
    """One profile: its plugins at each extension point, and the Handle they see."""

    def __init__(
        self,
        profile: Profile,
        registry: Registry,
        *,
        cluster: ClusterLister | None = None,
        client: ClusterClient | None = None,
        nominator: PodNominator | None = None,
        snapshot: Snapshot | None = None,
        rng: random.Random | None = None,
        waiting_pods: WaitingPodsMap | None = None,
    ) -> None:
        self.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self._cluster = cluster or StaticClusterLister()
        self._client = client or NoClient()
        self._nominator = nominator or Nominator()
        self._snapshot = snapshot or Snapshot(())
        self._rng = rng or random.Random()
        #: Pods held at Permit (shared by a scheduler's profiles, as upstream's).
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPodsMap()
        #: Times extension points and (sampled) plugins when set; None costs nothing.
        self.recorder: MetricsRecorder | None = None
        self.plugins: dict[str, Plugin] = {}
        self.score_weights: dict[str, int] = {}
        self.points: dict[str, list[Any]] = {wire: [] for _, wire in _POINTS}
        #: What the columnar runner learned about these plugins (its own cache).
        self.columnar_kinds: object = None
        #: The scheduler's extenders (upstream ``Handle.Extenders``); set before use.
        self.extenders: Extenders | None = None
        self._events: dict[str, list[ClusterEventWithHint]] | None = None
        self._pre_flights: list[tuple[Any, bool]] | None = None
        errors = self._build(profile, registry)
        if errors:
            raise ProfileError(errors)
        #: The plugin that says which pods form gangs (the first PodGroupPlugin enabled).
        self.pod_group_plugin: PodGroupPlugin | None = next(
            (p for p in self.plugins.values() if isinstance(p, PodGroupPlugin)), None
        )
        #: The first PostFilter plugin whose preemption can be dry-run (gangs'); found
        #: once, a runtime-checked Protocol's isinstance being slow.
        self.preemption_planner: PreemptionPlanner | None = next(
            (p for p in self.points["postFilter"] if isinstance(p, PreemptionPlanner)), None
        )

    # --- building ---------------------------------------------------------------------

    def _build(self, profile: Profile, registry: Registry) -> list[FieldError]:
        errors: list[FieldError] = []
        plugins_path = f"{profile.path}.plugins" if profile.path else "plugins"
        needed: dict[str, str] = {}  # plugin name → path of its first mention
        for attr, wire in (*_POINTS, ("multi_point", "multiPoint")):
            for i, ref in enumerate(getattr(profile.plugins, attr).enabled):
                needed.setdefault(ref.name, f"{plugins_path}.{wire}.enabled[{i}]")
        args_by_name: dict[str, tuple[Mapping[str, Any], str]] = {}
        for pc in profile.plugin_config:
            args_by_name[pc.name] = (pc.args, pc.path)
        for name, path in needed.items():
            try:
                factory = registry[name]
            except KeyError:
                errors.append(FieldError.invalid(f"{path}.name", name, "plugin does not exist"))
                continue
            except RegistryError as err:
                errors.append(FieldError.invalid(f"{path}.name", name, str(err)))
                continue
            args, args_path = args_by_name.get(name, ({}, ""))
            try:
                self.plugins[name] = factory(args, self)
            except ArgsError as err:
                prefix = args_path or f"{path}.args"
                errors.extend(_prefixed(e, prefix) for e in err.errors)
        if errors:
            return errors
        for attr, wire in _POINTS:
            errors.extend(self._explicit(getattr(profile.plugins, attr), wire, plugins_path))
        if profile.plugins.multi_point.enabled:
            errors.extend(self._expand_multi_point(profile, plugins_path))
        if errors:
            return errors
        if len(self.points["queueSort"]) != 1:
            errors.append(
                FieldError.invalid(
                    f"{plugins_path}.queueSort",
                    len(self.points["queueSort"]),
                    "only one queue sort plugin required for profile with scheduler name "
                    f'"{self.profile_name}"',
                )
            )
        if not self.points["bind"]:
            errors.append(
                FieldError.required(
                    f"{plugins_path}.bind",
                    "at least one bind plugin is needed for profile with scheduler name "
                    f'"{self.profile_name}"',
                )
            )
        weighted = [*profile.plugins.score.enabled, *profile.plugins.multi_point.enabled]
        # Weights are kept under the plugin's own name, which is what scoring reports;
        # for a plugin named by import path it differs from the configured name.
        scoring = {id(p) for p in self.points["score"]}
        for ref in weighted:
            plugin = self.plugins.get(ref.name)
            if plugin is not None and id(plugin) in scoring:
                self.score_weights.setdefault(plugin.name, ref.weight or 1)
        return errors

    def _explicit(self, plugin_set: Any, wire: str, plugins_path: str) -> list[FieldError]:
        errors: list[FieldError] = []
        protocol = EXTENSION_POINT_PROTOCOLS[wire]
        seen: set[str] = set()
        for i, ref in enumerate(plugin_set.enabled):
            plugin = self.plugins[ref.name]
            path = f"{plugins_path}.{wire}.enabled[{i}].name"
            if not isinstance(plugin, protocol):
                errors.append(
                    FieldError.invalid(
                        path, ref.name, f"plugin does not extend {_PROTOCOL_NAMES[wire]}"
                    )
                )
            elif ref.name in seen:
                errors.append(FieldError.duplicate(path, ref.name))
            else:
                seen.add(ref.name)
                self.points[wire].append(plugin)
        return errors

    def _expand_multi_point(self, profile: Profile, plugins_path: str) -> list[FieldError]:
        errors: list[FieldError] = []
        for attr, wire in _POINTS:
            plugin_set = getattr(profile.plugins, attr)
            protocol = EXTENSION_POINT_PROTOCOLS[wire]
            explicit = [ref.name for ref in plugin_set.enabled]
            disabled = {ref.name for ref in plugin_set.disabled}
            if "*" in disabled:
                continue
            overrides: list[str] = []
            multi: list[str] = []
            for i, ref in enumerate(profile.plugins.multi_point.enabled):
                if not isinstance(self.plugins[ref.name], protocol) or ref.name in disabled:
                    continue
                if ref.name in explicit:
                    overrides.append(ref.name)
                    continue
                if ref.name in multi:
                    errors.append(
                        FieldError.duplicate(
                            f"{plugins_path}.multiPoint.enabled[{i}].name", ref.name
                        )
                    )
                    continue
                multi.append(ref.name)
            # Order: explicit overrides (in their explicit order), then multiPoint
            # plugins, then the remaining explicit ones — upstream's expansion order.
            rest = [n for n in explicit if n not in overrides]
            ordered = [n for n in explicit if n in overrides] + multi + rest
            self.points[wire] = [self.plugins[n] for n in ordered if n in self.plugins]
        return errors

    # --- Handle -----------------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def set_snapshot(self, snapshot: Snapshot) -> None:
        """Point plugins at the snapshot of the current cycle."""
        self._snapshot = snapshot

    @property
    def cluster(self) -> ClusterLister:
        return self._cluster

    @property
    def client(self) -> ClusterClient:
        return self._client

    @property
    def nominator(self) -> PodNominator:
        return self._nominator

    @property
    def rng(self) -> random.Random:
        return self._rng

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod with ``uid`` if a Permit plugin holds it."""
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self, callback: Callable[[WaitingPod], object]) -> None:
        """Call ``callback`` for every pod held at Permit."""
        for waiting in self.waiting_pods:
            callback(waiting)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the pod with ``uid`` if it is held at Permit (it was deleted, say)."""
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True

    # --- queries ----------------------------------------------------------------------

    def plugins_at(self, point: str) -> list[Any]:
        """The plugins enabled at ``point`` (wire name, e.g. ``"filter"``), in order."""
        return list(self.points[point])

    def has_filter_plugins(self) -> bool:
        return bool(self.points["filter"])

    def has_score_plugins(self) -> bool:
        return bool(self.points["score"])

    def has_post_filter_plugins(self) -> bool:
        return bool(self.points["postFilter"])

    def pod_group(self, pod: Pod) -> PodGroupInfo | None:
        """The gang ``pod`` belongs to, from the profile's PodGroupPlugin; None for a pod
        outside any gang, and for a group of one (a quorum of one is an ordinary pod).
        A plugin that fails here leaves the pod outside any gang."""
        plugin = self.pod_group_plugin
        if plugin is None:
            return None
        try:
            group = plugin.pod_group(pod)
        except Exception:  # a plugin bug must not stop the queue
            return None
        if group is None or group.min_member <= 1:
            return None
        return group

    def queue_sort_less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        plugin: QueueSortPlugin = self.points["queueSort"][0]
        return plugin.less(a, b)

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint]]:
        """Per rejecting plugin, the cluster events that may make its rejections moot.

        Plugins that declare none get every event, as upstream's default extension.
        Worked out once: the plugins' declarations do not change.
        """
        if self._events is not None:
            return self._events
        out: dict[str, list[ClusterEventWithHint]] = {}
        for wire in _REJECTING_POINTS:
            for plugin in self.points[wire]:
                if plugin.name in out:
                    continue
                if isinstance(plugin, EnqueueExtensions):
                    out[plugin.name] = list(plugin.events_to_register())
                else:
                    out[plugin.name] = [ClusterEventWithHint(WILDCARD_EVENT)]
        if self.extenders is not None:
            # Extenders register no events: a pod they rejected retries on any change.
            out.setdefault(EXTENDER_NAME, [ClusterEventWithHint(WILDCARD_EVENT)])
        self._events = out
        return out

    # --- extension points -------------------------------------------------------------

    def _plugin_call(
        self,
        state: CycleState,
        point: str,
        plugin: Plugin,
        call: Callable[..., Any],
        status_at: int | None,
        *args: Any,
    ) -> Any:
        """``call(*args)``, timed as ``plugin`` at ``point`` when this cycle records
        plugin metrics (upstream samples 10% of cycles: ``record_plugin_metrics``)."""
        recorder = self.recorder if state.record_plugin_metrics else None
        if recorder is None:
            return call(*args)
        start = _now()
        result = call(*args)
        status = result if status_at is None or result is None else result[status_at]
        recorder.plugin_execution(plugin.name, point, status, _now() - start)
        return result

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status | None:
        for plugin in self.points["preEnqueue"]:
            status = _call_status(plugin, "pre_enqueue", pod)
            if status is not None and status.code is not Code.SUCCESS:
                if status.code is not Code.UNSCHEDULABLE_AND_UNRESOLVABLE and not (
                    status.is_rejected()
                ):
                    return Status.error(
                        f'running PreEnqueue plugin "{plugin.name}": {status.message}'
                    ).with_plugin(plugin.name)
                return status.with_plugin(plugin.name)
        return None

    @_timed("PreFilter", 1)
    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod
    ) -> tuple[PreFilterResult | None, Status | None, frozenset[str]]:
        """Run PreFilter; returns the merged result, the status, and the plugins that
        narrowed the node set."""
        nodes = self._snapshot.list()
        result: PreFilterResult | None = None
        with_nodes: list[str] = []
        skip: set[str] = set()
        rejected: Status | None = None
        try:
            for plugin in self.points["preFilter"]:
                try:
                    r, status = self._plugin_call(
                        state, "PreFilter", plugin, plugin.pre_filter, 1, state, pod, nodes
                    )
                except Exception as err:  # a plugin bug must not stop the scheduler
                    status, r = Status.error(f"{type(err).__name__}: {err}"), None
                if status is not None and status.code is Code.SKIP:
                    skip.add(plugin.name)
                    continue
                if status is not None and status.code is not Code.SUCCESS:
                    status = status.with_plugin(plugin.name)
                    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        return None, status, frozenset()
                    if status.code is Code.UNSCHEDULABLE:
                        rejected = status
                        continue
                    message = f'running PreFilter plugin "{plugin.name}": {status.message}'
                    return None, Status.error(message).with_plugin(plugin.name), frozenset()
                if r is not None and not r.all_nodes():
                    with_nodes.append(plugin.name)
                result = r if result is None else result.merge(r)
                if result is not None and result.node_names is not None and not result.node_names:
                    names = sorted(with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    return result, Status.unresolvable(msg), frozenset(names)
            return result, rejected, frozenset(with_nodes)
        finally:
            state.skip_filter_plugins = frozenset(skip)

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        skip = state.skip_filter_plugins
        for plugin in self.points["filter"]:
            if skip and plugin.name in skip:
                continue
            status = self.run_filter_plugin(plugin, state, pod, node_info)
            if status is not None:
                return status
        return None

    @staticmethod
    def run_filter_plugin(
        plugin: FilterPlugin, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """One Filter on one node: None, a rejection, or an Error, named after ``plugin``."""
        try:
            status = plugin.filter(state, pod, node_info)
        except Exception as err:  # a plugin bug must not stop the scheduler
            status = Status.error(f"{type(err).__name__}: {err}")
        if status is None or status.code is Code.SUCCESS:
            return None
        return filter_status(plugin.name, status)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Filter with equal-or-higher-priority nominated pods counted on the node, and
        again without them if they were added (upstream's two passes)."""
        nominated = self._nominator.nominated_pods_for_node(node_info.name)
        state_to_use, info_to_use, added = state, node_info, False
        if nominated:
            for pi in nominated:
                if pi.pod.priority >= pod.priority and pi.pod.key != pod.key:
                    if not added:
                        info_to_use = node_info.clone()
                        state_to_use = state.clone()
                        added = True
                    info_to_use.add_pod_info(pi)
                    status = self.run_pre_filter_extension_add_pod(
                        state_to_use, pod, pi, info_to_use
                    )
                    if status is not None and status.code is not Code.SUCCESS:
                        return status
        status = self.run_filter_plugins(state_to_use, pod, info_to_use)
        if not added or (status is not None and status.code is not Code.SUCCESS):
            return status
        return self.run_filter_plugins(state, pod, node_info)

    def _pre_filter_extension(
        self, method: str, state: CycleState, pod: Pod, info: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        for plugin in self.points["preFilter"]:
            if plugin.name in state.skip_filter_plugins:
                continue
            ext = plugin.pre_filter_extensions()
            if ext is None:
                continue
            status: Status | None = getattr(ext, method)(state, pod, info, node_info)
            if status is not None and status.code is not Code.SUCCESS:
                op = "AddPod" if method == "add_pod" else "RemovePod"
                return Status.error(
                    f'running {op} on PreFilter plugin "{plugin.name}": {status.message}'
                )
        return None

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._pre_filter_extension("add_pod", state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        return self._pre_filter_extension("remove_pod", state, pod, pod_to_remove, node_info)

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        fold = _PostFilterFold()
        for plugin in self.points["postFilter"]:
            r, status = self._plugin_call(
                state, "PostFilter", plugin, plugin.post_filter, 1, state, pod, node_to_status
            )
            done = fold.add(plugin.name, r, status)
            if done is not None:
                return done
        return fold.result()

    async def run_post_filter_plugins_async(
        self, state: CycleState, pod: Pod, node_to_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """``run_post_filter_plugins``, letting plugins that consult extenders await
        them (only when the profile has extenders)."""
        extenders = self.extenders
        fold = _PostFilterFold()
        for plugin in self.points["postFilter"]:
            if extenders is not None and isinstance(plugin, ExtenderAwarePostFilter):
                r, status = await plugin.post_filter_with_extenders(
                    state, pod, node_to_status, extenders
                )
            else:
                r, status = self._plugin_call(
                    state, "PostFilter", plugin, plugin.post_filter, 1, state, pod, node_to_status
                )
            done = fold.add(plugin.name, r, status)
            if done is not None:
                return done
        return fold.result()

    @_timed("PreScore")
    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        skip: set[str] = set()
        try:
            for plugin in self.points["preScore"]:
                status = self._plugin_call(
                    state, "PreScore", plugin, plugin.pre_score, None, state, pod, nodes
                )
                if status is not None and status.code is Code.SKIP:
                    skip.add(plugin.name)
                    continue
                if status is not None and status.code is not Code.SUCCESS:
                    return Status.error(
                        f'running PreScore plugin "{plugin.name}": {status.message}'
                    ).with_plugin(plugin.name)
            return None
        finally:
            state.skip_score_plugins = frozenset(skip)

    @_timed("Score", 1)
    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[dict[str, list[NodeScore]], Status | None]:
        """Score every node with every active plugin, normalize, and check the range.

        Returns each plugin's normalized (unweighted) scores, in ``nodes`` order; the
        caller applies ``score_weights``.
        """
        skip = state.skip_score_plugins
        plugins = [p for p in self.points["score"] if p.name not in skip]
        out: dict[str, list[NodeScore]] = {}
        for plugin in plugins:
            scores = []
            for info in nodes:
                value, status = plugin.score(state, pod, info)
                if status is not None and status.code is not Code.SUCCESS:
                    return {}, score_error(plugin.name, status)
                scores.append(NodeScore(info.name, value))
            ext = plugin.score_extensions()
            if ext is not None:
                status = ext.normalize_score(state, pod, scores)
                if status is not None and status.code is not Code.SUCCESS:
                    return {}, normalize_error(plugin.name, status)
            for s in scores:
                if not MIN_NODE_SCORE <= s.score <= MAX_NODE_SCORE:
                    return {}, range_error(plugin.name, s.score)
            out[plugin.name] = scores
        return out, None

    @_timed("Reserve")
    def run_reserve_plugins_reserve(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        for plugin in self.points["reserve"]:
            status: Status | None = self._plugin_call(
                state, "Reserve", plugin, plugin.reserve, None, state, pod, node_name
            )
            if status is not None and status.code is not Code.SUCCESS:
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status.error(
                    f'running Reserve plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
        return None

    @_timed("Unreserve")
    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # Reverse order, as upstream: undo in the opposite order of doing.
        for plugin in reversed(self.points["reserve"]):
            self._plugin_call(
                state, "Unreserve", plugin, plugin.unreserve, None, state, pod, node_name
            )

    @_timed("Permit")
    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Run Permit. A rejection or error ends it; when plugins ask to wait (and none
        rejects), the pod is added to the waiting pods with each plugin's timeout
        (capped at 15 minutes) and the status is Wait: its binding cycle must
        :meth:`wait_on_permit`."""
        timeouts: dict[str, float] = {}
        for plugin in self.points["permit"]:
            status: Status | None
            status, timeout = self._plugin_call(
                state, "Permit", plugin, plugin.permit, 0, state, pod, node_name
            )
            if status is None or status.code is Code.SUCCESS:
                continue
            if status.code is Code.WAIT:
                timeouts[plugin.name] = min(max(0.0, timeout), MAX_PERMIT_WAIT)
                continue
            if status.is_rejected():
                return status.with_plugin(plugin.name)
            return Status.error(
                f'running Permit plugin "{plugin.name}": {status.message}'
            ).with_plugin(plugin.name)
        if timeouts:
            self.waiting_pods.add(pod, timeouts)
            return Status(
                Code.WAIT,
                (f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"',),
            )
        return None

    def waiting_pod_for(self, pod: Pod) -> WaitingPod | None:
        """The waiting pod a Wait from :meth:`run_permit_plugins` left for ``pod``."""
        return self.waiting_pods.get(waiting_pod_key(pod))

    def wait_on_permit(self, waiting: WaitingPod) -> Status | None:
        """The outcome of a decided waiting pod, as upstream's ``WaitOnPermit`` returns
        it (None when allowed), and the pod leaves the waiting pods."""
        decision = waiting.decision
        if decision is None:
            raise RuntimeError(f"pod {waiting.pod.key} is still waiting on permit")
        self.waiting_pods.remove(waiting_pod_key(waiting.pod))
        if decision.code is Code.SUCCESS:
            return None
        if decision.is_rejected():
            return decision
        return Status.error(f"waiting on permit for pod: {decision.message}").with_plugin(
            decision.plugin
        )

    def has_pre_bind_plugins(self) -> bool:
        return bool(self.points["preBind"])

    def run_pre_bind_pre_flights(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """Upstream's ``RunPreBindPreFlights``: None when some PreBind plugin has work for
        the pod (a plugin without ``pre_bind_pre_flight`` always has), Skip when none has,
        Error when a pre-flight failed or answered anything but success or Skip. The
        plugins that skipped are recorded in ``state`` and left out of PreBind."""
        flights = self._pre_flights
        if flights is None:
            # Which plugins have a pre-flight, found once (a runtime-checked Protocol's
            # isinstance costs microseconds, and this runs for every pod).
            flights = self._pre_flights = [
                (plugin, isinstance(plugin, PreBindPreFlightPlugin))
                for plugin in self.points["preBind"]
            ]
        skip: set[str] = set()
        result: Status | None = _SKIP
        for plugin, has_flight in flights:
            if not has_flight:
                result = None
                continue
            try:
                status: Status | None = self._plugin_call(
                    state,
                    "PreBindPreFlight",
                    plugin,
                    plugin.pre_bind_pre_flight,
                    None,
                    state,
                    pod,
                    node_name,
                )
            except Exception as err:  # a plugin bug fails this binding only
                status = Status.error(f"{type(err).__name__}: {err}")
            if status is None or status.code is Code.SUCCESS:
                result = None
            elif status.code is Code.SKIP:
                skip.add(plugin.name)
            elif status.code is Code.ERROR:
                return Status.error(
                    f'running PreBindPreFlight "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
            else:
                return Status.error(
                    f'PreBindPreFlight {plugin.name} returned "{status.code}", which is '
                    "unsupported. It is supposed to return Success, Skip, or Error status"
                ).with_plugin(plugin.name)
        state.skip_pre_bind_plugins = frozenset(skip) if skip else _NO_PLUGINS
        return result

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Run PreBind, but for the plugins whose pre-flight skipped. May block (API calls,
        waits): the live scheduler calls it in a worker thread. An exception escaping a
        plugin (an unhandled API error) is that plugin's Error."""
        skip = state.skip_pre_bind_plugins
        for plugin in self.points["preBind"]:
            if plugin.name in skip:
                continue
            try:
                status: Status | None = self._plugin_call(
                    state, "PreBind", plugin, plugin.pre_bind, None, state, pod, node_name
                )
            except Exception as err:
                status = Status.error(str(err) or type(err).__name__)
            if status is not None and status.code is not Code.SUCCESS:
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status.error(
                    f'running PreBind plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
        return None

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        status: Status | None = Status.skip()
        for plugin in self.points["bind"]:
            status = self._plugin_call(
                state, "Bind", plugin, plugin.bind, None, state, pod, node_name
            )
            if status is not None and status.code is Code.SKIP:
                continue
            if status is not None and status.code is not Code.SUCCESS:
                if status.is_rejected():
                    return status.with_plugin(plugin.name)
                return Status.error(
                    f'running Bind plugin "{plugin.name}": {status.message}'
                ).with_plugin(plugin.name)
            return None
        return status

    @_timed("PostBind")
    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for plugin in self.points["postBind"]:
            self._plugin_call(
                state, "PostBind", plugin, plugin.post_bind, None, state, pod, node_name
            )


class _PostFilterFold:
    """Upstream's rules for PostFilter results: the first success or unresolvable
    status ends the run, an error ends it as an Error, rejections accumulate."""

    def __init__(self) -> None:
        self.result_: PostFilterResult | None = None
        self.reasons: list[str] = []
        self.rejector = ""

    def add(
        self, plugin: str, r: PostFilterResult | None, status: Status | None
    ) -> tuple[PostFilterResult | None, Status | None] | None:
        if status is None or status.code is Code.SUCCESS:
            return r, status
        if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return r, status.with_plugin(plugin)
        if not status.is_rejected():
            return None, Status.error(status.message).with_plugin(plugin)
        if r is not None:
            # An empty nomination is meaningful: it clears the pod's old one.
            self.result_ = r
        self.reasons.extend(status.reasons)
        self.rejector = self.rejector or plugin
        return None

    def result(self) -> tuple[PostFilterResult | None, Status | None]:
        return self.result_, Status(Code.UNSCHEDULABLE, tuple(self.reasons), self.rejector)


def filter_status(plugin: str, status: Status) -> Status:
    """A Filter's non-success verdict as the runner reports it: rejections keep their
    code, anything else becomes an Error; both name the plugin."""
    if not status.is_rejected():
        status = Status.error(f'running "{plugin}" filter plugin: {status.message}')
    return status.with_plugin(plugin)


def score_error(plugin: str, status: Status) -> Status:
    return Status.error(
        f'running Score plugins: plugin "{plugin}" failed with: {status.message}'
    ).with_plugin(plugin)


def normalize_error(plugin: str, status: Status) -> Status:
    return Status.error(
        f'running Normalize on Score plugins: plugin "{plugin}" failed with: {status.message}'
    ).with_plugin(plugin)


def range_error(plugin: str, score: int) -> Status:
    return Status.error(
        f'plugin "{plugin}" returns an invalid score {score}, it should '
        f"in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
    ).with_plugin(plugin)


def _call_status(plugin: PreEnqueuePlugin, method: str, pod: Pod) -> Status | None:
    try:
        result: Status | None = getattr(plugin, method)(pod)
    except Exception as err:
        return Status.error(f"{type(err).__name__}: {err}")
    return result


def _prefixed(error: FieldError, prefix: str) -> FieldError:
    path = f"{prefix}.{error.path}" if error.path else prefix
    return replace(error, path=path)


# Protocol names, re-exported for type annotations in callers.
__all__ = [
    "BindPlugin",
    "FilterPlugin",
    "Framework",
    "PermitPlugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreFilterPlugin",
    "PreScorePlugin",
    "ProfileError",
    "ReservePlugin",
    "ScorePlugin",
]
