"""``kubesched extender serve``: argument checks and what it builds (not the serving loop,
which the server tests cover)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.extender.cli import Serving, build_parser, build_serving, main
from kubesched.extender.profile import ProfileExtender

TWO_PROFILES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: spread
  plugins:
    score:
      disabled: [{name: '*'}]
      enabled: [{name: PodTopologySpread, weight: 2}]
"""


def serving(*argv: str) -> Serving:
    return build_serving(build_parser().parse_args(["serve", *argv]))


def test_without_config_serves_the_default_profile_on_8888() -> None:
    s = serving()
    assert (s.host, s.port, s.ssl_context) == ("0.0.0.0", 8888, None)
    backend = s.server.backend
    assert isinstance(backend, ProfileExtender)
    assert backend.framework.profile_name == "default-scheduler"
    assert backend.framework.score_weights["TaintToleration"] == 3


def test_profile_is_chosen_by_scheduler_name(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(TWO_PROFILES)
    s = serving("--config", str(config), "--profile", "spread", "--port", "9443", "--prefix", "x")
    assert s.port == 9443
    assert s.server.prefix == "/x"
    backend = s.server.backend
    assert isinstance(backend, ProfileExtender)
    assert backend.framework.score_weights == {"PodTopologySpread": 2}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--profile", "nope"],
            "kubesched extender: error: --profile: Not found: 'nope': profiles are default-scheduler\n",
            id="unknown-profile",
        ),
        pytest.param(
            ["--tls-cert", "cert.pem"],
            "kubesched extender: error: --tls-cert and --tls-key: Required value: give both or neither\n",
            id="half-a-tls-pair",
        ),
        pytest.param(
            ["--port", "70000"],
            "kubesched extender: error: --port: Invalid value: 70000: must be in the range [0, 65535]\n",
            id="port-out-of-range",
        ),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", *argv]) == 2
    assert capsys.readouterr().err == message


def test_tls_files_that_do_not_load_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("not a certificate")
    assert main(["serve", "--tls-cert", str(cert), "--tls-key", str(cert)]) == 2
    assert capsys.readouterr().err.startswith(
        "kubesched extender: error: --tls-cert/--tls-key: cannot load: "
    )


def test_bad_plugin_args_are_reported_with_file_and_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        TWO_PROFILES
        + "  pluginConfig:\n"
        + "  - name: PodTopologySpread\n"
        + "    args: {defaultingType: Sometimes}\n"
    )
    assert main(["serve", "--config", str(config), "--profile", "spread"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{config}: profiles[1].pluginConfig[0].args.defaultingType: ")


def test_unreadable_config_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.yaml"
    assert main(["serve", "--config", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err
