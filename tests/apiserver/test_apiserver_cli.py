"""``kubesched apiserver`` as a process: it writes its kubeconfig, serves, and stops cleanly
on SIGTERM; a busy port is a clear error."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request


def _command(*args):
    code = "import sys; from kubesched.cli.apiserver import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-c", code, *args]


def test_serves_until_sigterm(tmp_path):
    kubeconfig = tmp_path / "kc"
    proc = subprocess.Popen(
        _command("--port", "0", "--write-kubeconfig", str(kubeconfig)),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line
        url = json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        assert url in line
        with urllib.request.urlopen(url + "/api/v1/namespaces", timeout=5) as response:
            names = [n["metadata"]["name"] for n in json.loads(response.read())["items"]]
        assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "stopped" in out


def test_busy_port_is_a_clear_error(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        started = time.monotonic()
        result = subprocess.run(
            _command("--port", str(port), "--write-kubeconfig", str(tmp_path / "kc")),
            capture_output=True,
            text=True,
            timeout=20,
        )
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert time.monotonic() - started < 20
