"""What ``deploy/Dockerfile`` does, done without a container engine.

No container engine runs on these machines, so this test repeats the image's steps: it
builds a wheel of the package (only ``src/`` and ``pyproject.toml``, as the build stage
sees them through ``.dockerignore``), installs it with pip into a fresh venv that has no
pip of its own, makes the venv read-only (``chmod -R a-w``), and runs ``kubesched
simulate`` from it with the Dockerfile's ``ENV`` and as its ``USER`` (a non-root uid), in a
read-only working directory.

Two things differ from the image, both because the test must work offline:

* The wheel is assembled here from the sources and ``pyproject.toml`` rather than by
  ``pip wheel``: that needs the build backend pinned in ``[build-system]``, which the test
  venv does not have and cannot download. A pure-Python wheel is a zip of the package with
  its metadata; pip installs it exactly as it installs the one setuptools builds, entry
  point script included.
* The runtime dependencies are not downloaded: their installed files are copied from the
  test venv into the new venv's site-packages, so the pinned versions already installed are
  used. ``kubesched`` itself must come from the new venv, and the test checks that.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
EXAMPLES = ROOT / "examples"


# --- the build file, read --------------------------------------------------------------


def _instructions(text: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = pending + stripped
        pending = ""
        keyword, _, rest = full.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def _runtime_stage() -> list[tuple[str, str]]:
    """The instructions of the last stage, the one the image runs."""
    steps = _instructions(DOCKERFILE.read_text(encoding="utf-8"))
    last_from = max(i for i, (kw, _) in enumerate(steps) if kw == "FROM")
    return steps[last_from:]


def _image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, rest in _runtime_stage():
        if keyword == "ENV":
            for item in rest.split():
                key, _, value = item.partition("=")
                env[key] = value
    return env


def _image_user() -> tuple[int, int]:
    users = [rest for keyword, rest in _runtime_stage() if keyword == "USER"]
    assert users, "the runtime stage sets no USER: the image would run as root"
    uid, _, gid = users[-1].partition(":")
    return int(uid), int(gid or uid)


def test_dockerfile_runs_as_a_numeric_non_root_user() -> None:
    uid, gid = _image_user()
    assert uid != 0 and gid != 0


def test_dockerfile_keeps_runtime_writes_in_tmp() -> None:
    env = _image_env()
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["HOME"] == "/tmp"
    assert env["XDG_CACHE_HOME"].startswith("/tmp/")


def test_dockerfile_installs_no_dev_dependencies_and_runs_the_entry_point() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert "[dev]" not in text
    entrypoints = [rest for keyword, rest in _runtime_stage() if keyword == "ENTRYPOINT"]
    assert entrypoints == ['["kubesched"]']


def test_dockerignore_lets_in_only_what_the_build_copies() -> None:
    lines = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "*"
    assert {"!pyproject.toml", "!README.md", "!src/"} <= set(lines)


# --- the image's steps, done here ----------------------------------------------------


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def build_wheel(dest: Path) -> Path:
    """A wheel of ``src/kubesched`` with the metadata ``pyproject.toml`` declares."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = project["name"], project["version"]
    dist_info = f"{name}-{version}.dist-info"
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Requires-Python: {project['requires-python']}",
        *(f"Requires-Dist: {dep}" for dep in project["dependencies"]),
    ]
    scripts = ["[console_scripts]"]
    scripts += [f"{k} = {v}" for k, v in project["scripts"].items()]
    files: dict[str, bytes] = {}
    package = ROOT / "src" / "kubesched"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            files[path.relative_to(ROOT / "src").as_posix()] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    files[f"{dist_info}/entry_points.txt"] = ("\n".join(scripts) + "\n").encode()
    wheel_meta = "Wheel-Version: 1.0\nGenerator: kubesched-tests\nRoot-Is-Purelib: true\n"
    files[f"{dist_info}/WHEEL"] = (wheel_meta + "Tag: py3-none-any\n").encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for arcname, data in files.items():
        writer.writerow([arcname, _record_hash(data), len(data)])
    writer.writerow([f"{dist_info}/RECORD", "", ""])
    files[f"{dist_info}/RECORD"] = record.getvalue().encode()
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files.items():
            zf.writestr(arcname, data)
    return wheel


@pytest.fixture(scope="module")
def world_readable_dir() -> Iterator[Path]:
    """A scratch directory an unprivileged user can reach (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="kubesched-image-"))
    path.chmod(0o755)
    yield path
    for sub in path.rglob("*"):
        if not sub.is_symlink():
            sub.chmod(sub.stat().st_mode | stat.S_IWUSR)
    shutil.rmtree(path)


@pytest.fixture(scope="module")
def installed(world_readable_dir: Path) -> Path:
    """The image's /opt/kubesched: a venv without pip, the wheel installed, read-only."""
    venv = world_readable_dir / "opt-kubesched"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60
    )
    wheel = build_wheel(world_readable_dir)
    install = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    install += ["install", "--no-deps", "--no-index", "--disable-pip-version-check"]
    subprocess.run([*install, str(wheel)], check=True, timeout=120, capture_output=True)
    # The pinned runtime dependencies of the test venv, after the new venv's own packages.
    site = Path(
        subprocess.check_output(
            [
                str(venv / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_path('purelib'))",
            ],
            text=True,
        ).strip()
    )
    _copy_runtime_deps(site)
    subprocess.run(["chmod", "-R", "a-w", str(venv)], check=True)
    return venv


@pytest.fixture(scope="module")
def workdir(world_readable_dir: Path) -> Path:
    """A read-only working directory holding the example cluster and workload."""
    work = world_readable_dir / "work"
    work.mkdir()
    for name in ("cluster.yaml", "workload.yaml", "config.yaml", "gpu.py"):
        shutil.copy(EXAMPLES / name, work / name)
    subprocess.run(["chmod", "-R", "a-w", str(work)], check=True)
    return work


_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _runtime_closure() -> list[metadata.Distribution]:
    """kubesched's runtime dependencies and theirs, as installed in the test venv
    (requirements behind an ``extra`` marker are left out, as pip leaves them out)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = [r for r in metadata.requires("kubesched") or [] if "extra ==" not in r]
    while todo:
        match = _REQUIREMENT_NAME.match(todo.pop())
        if match is None:
            continue
        name = match.group(1).lower().replace("_", "-")
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional or platform-specific requirement not installed here
        seen[name] = dist
        todo += [r for r in dist.requires or [] if "extra ==" not in r]
    return list(seen.values())


def _copy_runtime_deps(site: Path) -> None:
    """Put the pinned runtime dependencies into the new venv by copying their installed
    files (no network, and nothing outside the venv that an unprivileged user could be
    denied), as ``pip install`` of the wheel with its dependencies would have."""
    for dist in _runtime_closure():
        base = Path(str(dist.locate_file("")))
        for file in dist.files or []:
            source = base / file
            target = (site / file).resolve()
            if not source.is_file() or not target.is_relative_to(site.resolve()):
                continue  # scripts and data outside site-packages are not needed here
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _as_image_user(argv: list[str]) -> list[str]:
    """``argv`` run as the Dockerfile's USER; when already unprivileged, as ourselves."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is not installed: cannot drop to the image's uid")
    uid, gid = _image_user()
    return [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *argv]


def _run(installed: Path, workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = _image_env()
    env["PATH"] = env["PATH"].replace("/opt/kubesched/bin", str(installed / "bin"))
    env["PATH"] = env["PATH"].replace("$PATH", "/usr/local/bin:/usr/bin:/bin")
    probe = subprocess.run(
        _as_image_user([str(installed / "bin" / "python"), "-c", "pass"]),
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0:
        pytest.skip(f"the image's uid cannot run the venv's interpreter here: {probe.stderr}")
    return subprocess.run(
        _as_image_user(list(args)),
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_installed_entry_point_imports_kubesched_from_the_read_only_venv(
    installed: Path, workdir: Path
) -> None:
    where = (
        "import kubesched, os, sys; "
        "print(kubesched.__file__, sys.flags.dont_write_bytecode, os.getuid())"
    )
    result = _run(installed, workdir, str(installed / "bin" / "python"), "-c", where)
    assert result.returncode == 0, result.stderr
    module_file, no_bytecode, uid = result.stdout.split()
    assert Path(module_file).is_relative_to(installed)
    assert no_bytecode == "1"
    assert int(uid) == (_image_user()[0] if os.geteuid() == 0 else os.geteuid())
    assert not (installed / "bin").stat().st_mode & 0o222


def test_kubesched_simulate_runs_unprivileged_from_a_read_only_install(
    installed: Path, workdir: Path
) -> None:
    result = _run(
        installed,
        workdir,
        "kubesched",
        "simulate",
        "--cluster",
        "cluster.yaml",
        "--pods",
        "workload.yaml",
        "--config",
        "config.yaml",
        "--seed",
        "1",
        "--output",
        "json",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    placements = {p["pod"]: p for p in data["placements"]}
    assert placements["ml/train-xl"]["node"] is None
    assert placements["ml/train-xl"]["message"].startswith("0/8 nodes are available")
    assert placements["shop/checkout-hotfix"]["preempted"]
    assert data["summary"]["scheduled"] >= 1
    # Nothing was written to the working directory (the install is read-only anyway).
    assert sorted(p.name for p in workdir.iterdir()) == [
        "cluster.yaml",
        "config.yaml",
        "gpu.py",
        "workload.yaml",
    ]


def test_kubesched_help_is_the_image_default_command(installed: Path, workdir: Path) -> None:
    result = _run(installed, workdir, "kubesched", "--help")
    assert result.returncode == 0, result.stderr
    assert "simulate" in result.stdout and "explain" in result.stdout
