"""Lease requests ahead of other writes (``apiserver/flowcontrol.py``), against the real
server: with every write seat taken, a Lease renewal is still served, and other writes
wait their turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from kubesched.apiserver.flowcontrol import WRITE_SEATS, is_lease_request
from kubesched.apiserver.runner import start_apiserver
from kubesched.kube import Client, load_kubeconfig
from kubesched.kube.resources import NAMESPACES


@pytest.mark.parametrize(
    ("path", "lease"),
    [
        pytest.param(
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l", True, id="a-lease"
        ),
        pytest.param(
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", True, id="leases"
        ),
        pytest.param("/apis/coordination.k8s.io/v1/leases", True, id="leases-everywhere"),
        pytest.param("/api/v1/namespaces/default/pods/leases", False, id="a-pod-named-leases"),
        pytest.param("/apis/apps/v1/namespaces/d/deployments/leases", False, id="another-group"),
        pytest.param("/api/v1/namespaces/default/pods", False, id="pods"),
    ],
)
def test_lease_requests_are_recognised_by_group_and_resource(path: str, lease: bool) -> None:
    assert is_lease_request([p for p in path.split("/") if p]) is lease


def test_a_lease_renewal_is_served_while_every_write_seat_is_taken(tmp_path: Path) -> None:
    with start_apiserver(kubeconfig_path=tmp_path / "kubeconfig") as server:

        async def main() -> None:
            url = urlsplit(server.url)
            async with Client(load_kubeconfig([server.kubeconfig_path])) as client:
                lease = await client.create_lease(
                    {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {"name": "held", "namespace": "kube-system"},
                        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
                    }
                )
                # Writes whose bodies never come hold every seat.
                stalled = []
                for _ in range(WRITE_SEATS):
                    _, writer = await asyncio.open_connection(url.hostname, url.port)
                    writer.write(
                        b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                        b"Host: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100\r\n\r\n{"
                    )
                    await writer.drain()
                    stalled.append(writer)
                await asyncio.sleep(0.2)  # the server has taken them in
                waiting = asyncio.create_task(
                    client.create(NAMESPACES.raw, {"metadata": {"name": "queued"}})
                )
                renewed = await asyncio.wait_for(client.update_lease(lease), 10.0)
                assert renewed["spec"]["holderIdentity"] == "me"
                # The other write waits for a seat meanwhile.
                await asyncio.sleep(0.3)
                assert not waiting.done()
                for writer in stalled:
                    writer.close()
                created = await asyncio.wait_for(waiting, 10.0)
                assert created["metadata"]["name"] == "queued"

        asyncio.run(asyncio.wait_for(main(), 30.0))
