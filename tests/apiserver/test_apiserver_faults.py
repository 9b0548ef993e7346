"""Fault injection (``--faults``): each fault does what the documentation says, seen by
the official ``kubernetes`` client and by raw HTTP against a real server; bad specs are
refused naming the part."""

from __future__ import annotations

import http.client
import json
import logging
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kubesched.apiserver.faults import FaultSpecError, parse_faults
from kubesched.apiserver.records import RECORDS_PATH
from kubesched.apiserver.runner import ApiServerHandle, start_apiserver
from kubesched.cli import apiserver as apiserver_cli


@contextmanager
def server(spec: str) -> Iterator[ApiServerHandle]:
    handle = start_apiserver(faults=spec, bookmark_interval=0.2)
    try:
        yield handle
    finally:
        handle.stop()


@contextmanager
def core_api(handle: ApiServerHandle) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(handle.kubeconfig_path))
    try:
        yield client.CoreV1Api(api)
    finally:
        api.close()


def connection(handle: ApiServerHandle) -> http.client.HTTPConnection:
    url = urlsplit(handle.url)
    return http.client.HTTPConnection(url.hostname or "", url.port)


def configmap(name: str, **data: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def send(
    conn: http.client.HTTPConnection, method: str, path: str, body: object = None
) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, json.dumps(body) if body is not None else None, headers)
    answer = conn.getresponse()
    return answer.status, dict(answer.getheaders()), answer.read()


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


# --- the spec ---------------------------------------------------------------------------


def test_a_spec_parses_into_its_parts() -> None:
    spec = parse_faults(
        "errors=0.25,codes=503,429,retry-after=2,resets=0.1,delay=0.01-0.05,"
        "verbs=create,update,resources=pods/binding,leases,drop-watches=3,window=50,seed=7"
    )
    assert spec.errors == 0.25 and spec.codes == (503, 429) and spec.retry_after == 2
    assert spec.resets == 0.1 and spec.delay == (0.01, 0.05)
    assert spec.verbs == {"create", "update"} and spec.resources == {"pods/binding", "leases"}
    assert spec.drop_watches == 3 and spec.window == 50 and spec.seed == 7
    assert spec.matches("create", "leases") and not spec.matches("get", "leases")
    assert not spec.matches("create", "pods")
    assert parse_faults("delay=0.2").delay == (0.2, 0.2)
    assert parse_faults("seed=1").codes == (500, 503, 429)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("errors=1.5", "errors='1.5': the fraction must be between 0 and 1, not 1.5"),
        ("errors=x", "errors='x': 'x' is not a number"),
        ("errors=0.1,codes=404", "codes='404': '404' is not one of 429, 500, 502, 503, 504"),
        ("delay=0.5-0.1", "delay='0.5-0.1': the range 0.5-0.1 runs backwards"),
        ("drop-watches=0", "drop-watches='0': the period must be more than 0 seconds"),
        ("window=0", "window='0': '0' must be a whole number >= 1"),
        ("verbs=post", "verbs='post': unknown verb 'post'; verbs: get, list, watch"),
        ("resources=Pods", "resources='Pods': 'Pods' is not a resource"),
        ("errors=0.1,,seed=1", "part 2 '': empty"),
        ("errors=0.1,bogus=3", "part 2 'bogus=3': unknown key 'bogus'; keys: errors, codes"),
        ("errors=0.1,seed", "part 2 'seed': expected key=value"),
        ("seed=1,seed=2", "part 2 'seed=2': seed given twice"),
        ("retry-after=-1", "retry-after='-1': '-1' must be a whole number >= 0"),
    ],
)
def test_a_bad_spec_is_refused_naming_the_part(text: str, message: str) -> None:
    with pytest.raises(FaultSpecError) as caught:
        parse_faults(text)
    assert message in str(caught.value)


def test_the_command_refuses_a_bad_spec_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert apiserver_cli.main(["--port", "0", "--faults", "errors=2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kubesched apiserver: --faults: errors='2': the fraction must be")


# --- each fault -------------------------------------------------------------------------


def test_errors_429_carry_retry_after_and_only_hit_the_chosen_verbs_and_resources() -> None:
    with server("errors=1,codes=429,retry-after=3,verbs=create,resources=configmaps") as h:
        with core_api(h) as core:
            with pytest.raises(ApiException) as caught:
                core.create_namespaced_config_map("default", configmap("a"))
            assert caught.value.status == 429
            assert caught.value.headers["Retry-After"] == "3"
            status = json.loads(caught.value.body)
            assert status["reason"] == "TooManyRequests"
            assert status["details"] == {"retryAfterSeconds": 3}
            assert "injected by --faults" in status["message"]
            # Other verbs and resources are served: lists, secrets.
            assert core.list_namespaced_config_map("default").items == []
            core.create_namespaced_secret(
                "default", client.V1Secret(metadata=client.V1ObjectMeta(name="s"))
            )
            # The refused create did nothing.
            with pytest.raises(ApiException) as missing:
                core.read_namespaced_config_map("a", "default")
            assert missing.value.status == 404
        assert h.faults is not None and h.faults.injected["error 429"] == 1


def test_errors_500_have_no_retry_after_and_503_has_it() -> None:
    with server("errors=1,codes=500,503,seed=3,resources=configmaps") as h:
        conn = connection(h)
        seen: dict[int, dict[str, str]] = {}
        for _ in range(20):
            code, headers, body = send(conn, "GET", CONFIGMAPS)
            seen[code] = headers
            assert json.loads(body)["code"] == code
        assert set(seen) == {500, 503}
        assert "Retry-After" not in seen[500]
        assert seen[503]["Retry-After"] == "1"
        # Discovery and health are never faulted.
        assert send(conn, "GET", "/api/v1")[0] == 200
        assert send(conn, "GET", "/healthz")[0] == 200


def codes_seen(spec: str, count: int) -> list[int]:
    with server(spec) as h:
        conn = connection(h)
        return [send(conn, "GET", CONFIGMAPS)[0] for _ in range(count)]


def test_the_same_seed_gives_the_same_faults_and_another_seed_others() -> None:
    first = codes_seen("errors=0.5,codes=500,seed=11", 40)
    assert 200 in first and 500 in first
    assert codes_seen("errors=0.5,codes=500,seed=11", 40) == first
    assert codes_seen("errors=0.5,codes=500,seed=12", 40) != first


def test_a_reset_serves_the_request_and_cuts_the_answer() -> None:
    with server("resets=1,verbs=create") as h:
        conn = connection(h)
        with pytest.raises(http.client.RemoteDisconnected):
            send(conn, "POST", CONFIGMAPS, configmap("lost", k="v"))
        conn = connection(h)
        code, _, body = send(conn, "GET", f"{CONFIGMAPS}/lost")
        assert code == 200 and json.loads(body)["data"] == {"k": "v"}
        assert h.faults is not None and h.faults.injected["reset"] == 1


def test_a_delay_holds_each_request_that_long() -> None:
    with server("delay=0.3,verbs=get") as h:
        conn = connection(h)
        assert send(conn, "GET", CONFIGMAPS)[0] == 200  # a list: not delayed
        send(conn, "POST", CONFIGMAPS, configmap("d"))
        started = time.monotonic()
        assert send(conn, "GET", f"{CONFIGMAPS}/d")[0] == 200
        # A lower bound, not a speed: the fault's promise is that the answer waits.
        assert time.monotonic() - started >= 0.3
        assert h.faults is not None and h.faults.injected["delay"] == 1


def test_watches_are_cut_on_the_drop_clock_without_a_clean_end() -> None:
    with server("drop-watches=0.5") as h:
        conn = connection(h)
        send(conn, "POST", CONFIGMAPS, configmap("w"))
        conn.request("GET", f"{CONFIGMAPS}?watch=true&timeoutSeconds=30")
        answer = conn.getresponse()
        assert answer.status == 200
        with pytest.raises(http.client.IncompleteRead) as caught:
            answer.read()
        # The ADDED event came before the cut.
        assert b'"type":"ADDED"' in caught.value.partial
        assert h.faults is not None and h.faults.injected["watch drop"] == 1


def test_a_resume_older_than_the_window_meets_410_gone() -> None:
    with server("window=2") as h:
        conn = connection(h)
        code, _, body = send(conn, "POST", CONFIGMAPS, configmap("v", n="0"))
        start = int(json.loads(body)["metadata"]["resourceVersion"])
        query = "?watch=true&timeoutSeconds=1&resourceVersion="
        # Within the window: the change is replayed.
        send(conn, "PUT", f"{CONFIGMAPS}/v", configmap("v", n="1"))
        _, _, body = send(conn, "GET", f"{CONFIGMAPS}{query}{start}")
        assert json.loads(body.splitlines()[0])["type"] == "MODIFIED"
        for n in range(2, 5):
            send(conn, "PUT", f"{CONFIGMAPS}/v", configmap("v", n=str(n)))
        code, _, body = send(conn, "GET", f"{CONFIGMAPS}{query}{start}")
        event = json.loads(body.splitlines()[0])
        assert code == 200 and event["type"] == "ERROR"
        assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
        # A fresh watch (no version) is not refused.
        code, _, body = send(conn, "GET", f"{CONFIGMAPS}?watch=true&timeoutSeconds=1")
        assert json.loads(body.splitlines()[0])["type"] == "ADDED"
        assert h.faults is not None and h.faults.injected["expired"] == 1


def test_the_records_show_bindings_lease_writes_and_pod_writes() -> None:
    with server("seed=0") as h, core_api(h) as core:
        core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="n1")))
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="p"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="i")]),
        )
        core.create_namespaced_pod("default", pod)
        target = client.V1ObjectReference(kind="Node", name="n1")
        binding = client.V1Binding(metadata=client.V1ObjectMeta(name="p"), target=target)
        core.create_namespaced_binding("default", binding, _preload_content=False)
        with pytest.raises(ApiException) as again:
            core.create_namespaced_binding("default", binding, _preload_content=False)
        assert again.value.status == 409
        coordination = client.CoordinationV1Api(core.api_client)
        lease = client.V1Lease(
            metadata=client.V1ObjectMeta(name="l"),
            spec=client.V1LeaseSpec(holder_identity="me", lease_duration_seconds=15),
        )
        coordination.create_namespaced_lease("default", lease)
        with urllib.request.urlopen(h.url + RECORDS_PATH) as answer:
            records = json.load(answer)
    assert [(b["name"], b["node"], b["code"]) for b in records["bindings"]] == [
        ("p", "n1", 201),
        ("p", "n1", 409),
    ]
    assert records["bindings"][0]["userAgent"].startswith("OpenAPI-Generator")
    [written] = records["leases"]
    assert (written["name"], written["holder"], written["leaseDurationSeconds"]) == ("l", "me", 15)
    assert [(w["verb"], w["resource"], w["name"]) for w in records["podWrites"]] == [
        ("create", "bindings", "p")
    ]
    assert records["faults"] == {"spec": "seed=0", "injected": {}}


def test_a_client_that_gives_up_mid_body_is_not_a_server_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with server("seed=0") as h, caplog.at_level(logging.ERROR):
        url = urlsplit(h.url)
        for path in (f"{CONFIGMAPS}", "/api/v1/namespaces/default/pods/p/binding"):
            with socket.create_connection((url.hostname or "", url.port or 0)) as sock:
                head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                sock.sendall(head.encode() + b'Content-Length: 100\r\n\r\n{"kind"')
            conn = connection(h)  # the server still serves, and stored nothing
            code, _, body = send(conn, "GET", CONFIGMAPS)
            assert code == 200 and json.loads(body)["items"] == []
        assert h.records is not None
        assert [b.code for b in h.records.bindings] in ([], [400])  # cut short: refused
    assert [r.getMessage() for r in caplog.records] == []


def test_the_command_serves_with_faults_and_records(tmp_path) -> None:
    kubeconfig = tmp_path / "kc"
    code = "import sys; from kubesched.cli.apiserver import main; sys.exit(main(sys.argv[1:]))"
    spec = "errors=1,codes=503,retry-after=2,resources=configmaps"
    args = ("--faults", spec)
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "--port", "0", "--write-kubeconfig", str(kubeconfig), *args],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "listening on" in (proc.stdout.readline() if proc.stdout else "")
        assert f"injecting faults {spec!r}" in (proc.stdout.readline() if proc.stdout else "")
        url = json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + CONFIGMAPS, timeout=5)
        assert refused.value.code == 503 and refused.value.headers["Retry-After"] == "2"
        with urllib.request.urlopen(url + RECORDS_PATH, timeout=5) as answer:
            records = json.load(answer)
        assert records["faults"] == {"spec": spec, "injected": {"error 503": 1}}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0
