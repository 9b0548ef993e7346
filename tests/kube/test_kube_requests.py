"""What a client counts of its requests (verb, resource, code), and derived clients with
their own token bucket, against the real embedded API server."""

from __future__ import annotations

import pytest
from kube_helpers import node, pod

from kubesched.kube import Client, ConnectionFailed, NotFound
from kubesched.kube.client import NO_ANSWER
from kubesched.kube.requestinfo import request_info
from kubesched.kube.resources import LEASES, NODES, PODS


@pytest.mark.parametrize(
    ("method", "path", "params", "expected"),
    [
        pytest.param("GET", "/api/v1/namespaces/d/pods/p", None, ("get", "pods"), id="get-a-pod"),
        pytest.param("GET", "/api/v1/pods", None, ("list", "pods"), id="list-pods-everywhere"),
        pytest.param(
            "GET",
            "/api/v1/namespaces/d/pods",
            {"watch": "true"},
            ("watch", "pods"),
            id="watch-param-makes-a-watch",
        ),
        pytest.param(
            "GET",
            "/api/v1/watch/namespaces/d/pods",
            None,
            ("watch", "pods"),
            id="legacy-watch-prefix",
        ),
        pytest.param(
            "POST",
            "/api/v1/namespaces/d/pods/p/binding",
            None,
            ("create", "pods/binding"),
            id="binding-is-a-create-of-the-subresource",
        ),
        pytest.param(
            "PATCH",
            "/api/v1/namespaces/d/pods/p/status",
            None,
            ("patch", "pods/status"),
            id="status-patch",
        ),
        pytest.param(
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l",
            None,
            ("update", "leases"),
            id="lease-update-in-a-group",
        ),
        pytest.param(
            "POST",
            "/apis/events.k8s.io/v1/namespaces/d/events",
            None,
            ("create", "events"),
            id="event-create",
        ),
        pytest.param("DELETE", "/api/v1/nodes/n", None, ("delete", "nodes"), id="delete-node"),
        pytest.param(
            "DELETE",
            "/api/v1/namespaces/d/pods",
            None,
            ("deletecollection", "pods"),
            id="delete-without-a-name-is-deletecollection",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/d",
            None,
            ("get", "namespaces"),
            id="a-namespace-itself",
        ),
        pytest.param("GET", "/version", None, ("get", ""), id="no-resource"),
    ],
)
def test_request_info_names_verb_and_resource(method, path, params, expected) -> None:
    assert request_info(method, path, params) == expected


def test_a_client_counts_its_requests_by_verb_resource_and_code(with_client) -> None:
    async def body(client: Client) -> None:
        await client.create(NODES.raw, node("count-n"))
        await client.create(PODS.raw, pod("count-p"))
        await client.bind("default", "count-p", "count-n")
        await client.patch_pod_status("default", "count-p", {"status": {"message": "m"}})
        with pytest.raises(NotFound):
            await client.get(PODS.raw, "nobody", "default")
        await client.list(PODS.raw, "default")
        assert client.requests == {
            ("create", "nodes", "201"): 1,
            ("create", "pods", "201"): 1,
            ("create", "pods/binding", "201"): 1,
            ("patch", "pods/status", "200"): 1,
            ("get", "pods", "404"): 1,
            ("list", "pods", "200"): 1,
        }

    with_client(body)


def test_a_request_without_an_answer_counts_as_error(with_client) -> None:
    async def body(client: Client) -> None:
        dead = client.derive()
        dead.config = type(client.config)(server="http://127.0.0.1:9")  # nothing listens
        async with dead:
            with pytest.raises(ConnectionFailed):
                await dead.get(LEASES.raw, "x", "kube-system")
        assert dead.requests == {("get", "leases", NO_ANSWER): 1}

    with_client(body)


def test_a_derived_client_has_its_own_bucket_agent_timeout_and_counts(with_client) -> None:
    async def body(client: Client) -> None:
        derived = client.derive("leader-election", timeout=5.0)
        async with derived:
            assert derived.limiter is not client.limiter
            assert (derived.limiter.qps, derived.limiter.burst) == (7.0, 3)
            assert derived.user_agent == "kubesched/leader-election"
            assert derived.timeout == 5.0 and client.timeout == 30.0
            await derived.list(NODES.raw)
            assert derived.requests == {("list", "nodes", "200"): 1}
            assert not client.requests

    with_client(body, qps=7.0, burst=3)
