"""`python -m platform_bus.healthcheck`, the images' health check, against a real nats-server and a
real HTTP server standing in for the gateway."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from platform_bus import connect, flush_queued
from platform_bus.healthcheck import SERVICES, listen_port_of_process, main, service_of_process
from platform_contracts import subjects
from platform_testing.nats_server import NatsServer
from platform_testing.ports import free_port


async def healthcheck(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The command as a container runs it, while this event loop goes on answering."""
    command = [sys.executable, "-m", "platform_bus.healthcheck", *args]
    environ = {key: value for key, value in os.environ.items() if not key.startswith("PLATFORM_")}
    return await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, timeout=30,
                                   env={**environ, **env})


@pytest.fixture
def nats(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(store_dir=tmp_path / "nats").start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_service_answering_its_subject_is_healthy(nats: NatsServer) -> None:
    nc = await connect(nats.url, name="broker-stand-in")
    asked: list[bytes] = []

    async def answer(msg) -> None:  # type: ignore[no-untyped-def]
        asked.append(msg.data)
        await msg.respond(b"")

    await nc.subscribe(subjects.BROKER_LIST_ENVS, cb=answer)
    await flush_queued(nc)
    try:
        done = await healthcheck("broker", env={"PLATFORM_NATS_URL": nats.url})
    finally:
        await nc.close()
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"broker: healthy (answers {subjects.BROKER_LIST_ENVS})\n", "")
    assert asked == [b""]


async def test_the_env_host_is_asked_on_its_own_subject(nats: NatsServer) -> None:
    nc = await connect(nats.url, name="envhost-stand-in")

    async def answer(msg) -> None:  # type: ignore[no-untyped-def]
        await msg.respond(b"")

    await nc.subscribe(subjects.envhost_list("envhost-7"), cb=answer)
    await flush_queued(nc)
    try:
        healthy = await healthcheck("envhost", env={"PLATFORM_NATS_URL": nats.url, "PLATFORM_ENVHOST_ID": "envhost-7"})
        other = await healthcheck("envhost", env={"PLATFORM_NATS_URL": nats.url, "PLATFORM_ENVHOST_ID": "envhost-8"})
        unnamed = await healthcheck("envhost", env={"PLATFORM_NATS_URL": nats.url})
    finally:
        await nc.close()
    assert healthy.returncode == 0, healthy.stderr
    assert (other.returncode, other.stderr) == (
        1, "unhealthy: envhost unavailable: nothing answers platform.envhost.envhost-8.list\n")
    assert unnamed.returncode == 1
    assert unnamed.stderr.startswith("unhealthy: envhost: PLATFORM_ENVHOST_ID is unset")


async def test_a_service_nobody_serves_is_unhealthy_at_once(nats: NatsServer) -> None:
    done = await healthcheck("recorder", env={"PLATFORM_NATS_URL": nats.url})
    assert (done.returncode, done.stdout, done.stderr) == (
        1, "", f"unhealthy: recorder unavailable: nothing answers {subjects.RECORDER_GET_SNAPSHOT}\n")


async def test_a_service_that_answers_late_is_unhealthy(nats: NatsServer) -> None:
    nc = await connect(nats.url, name="slow-machines")

    async def late(msg) -> None:  # type: ignore[no-untyped-def]
        await asyncio.sleep(3)
        await msg.respond(b"")

    await nc.subscribe(subjects.MACHINES_SSH_KEY, cb=late)
    await flush_queued(nc)
    try:
        done = await healthcheck("machines", "--timeout", "1", env={"PLATFORM_NATS_URL": nats.url})
    finally:
        await nc.close()
    assert (done.returncode, done.stderr) == (
        1, f"unhealthy: machines unavailable: no answer on {subjects.MACHINES_SSH_KEY} within 1 s\n")


async def test_unreachable_nats_is_unhealthy_naming_it() -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    done = await healthcheck("evals", "--timeout", "1", env={"PLATFORM_NATS_URL": url})
    assert done.returncode == 1
    assert done.stderr.startswith(f"unhealthy: evals: cannot connect to NATS at {url} within 1 s (")


class _Healthz(BaseHTTPRequestHandler):
    nats_state = "connected"

    def do_GET(self) -> None:
        body = json.dumps({"ok": True, "nats": self.nats_state}).encode()
        self.send_response(200 if self.path == "/healthz" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def gateway_stand_in() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Healthz)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def test_the_gateway_is_healthy_when_its_healthz_says_nats_is_connected(
        gateway_stand_in: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    port = str(gateway_stand_in.server_address[1])
    healthy = await healthcheck("gateway", env={"PLATFORM_PORT": port})
    assert (healthy.returncode, healthy.stdout) == (0, f"gateway: healthy (http://127.0.0.1:{port}/healthz)\n")
    monkeypatch.setattr(_Healthz, "nats_state", "disconnected")
    cut_off = await healthcheck("gateway", env={"PLATFORM_PORT": port})
    assert (cut_off.returncode, cut_off.stderr) == (
        1, f"unhealthy: gateway: http://127.0.0.1:{port}/healthz says NATS is disconnected\n")


async def test_a_gateway_not_listening_is_unhealthy() -> None:
    port = free_port()
    done = await healthcheck("gateway", "--timeout", "1", env={"PLATFORM_PORT": str(port)})
    assert done.returncode == 1
    assert done.stderr.startswith(f"unhealthy: gateway: http://127.0.0.1:{port}/healthz: ")


def test_the_service_is_the_one_process_1_runs() -> None:
    assert service_of_process(b"python\0-m\0platform_broker\0") == "broker"
    assert service_of_process(b"/sbin/docker-init\0--\0python\0-m\0platform_envhost\0") == "envhost"
    assert service_of_process(b"python\0-m\0platform_sdk\0--gym-id\0CartPole-v1\0") == "environment-server"
    assert service_of_process(b"nats-server\0-js\0") is None
    assert set(SERVICES) == {"gateway", "broker", "envhost", "recorder", "machines", "evals", "environment-server"}


def test_without_a_name_the_service_of_process_1_is_checked(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    cmdline = tmp_path / "cmdline"
    cmdline.write_bytes(b"python\0-m\0platform_machines\0")
    url = f"nats://127.0.0.1:{free_port()}"
    assert main(["--timeout", "1"], environ={"PLATFORM_NATS_URL": url}, init_cmdline=cmdline) == 1
    assert capsys.readouterr().err.startswith(f"unhealthy: machines: cannot connect to NATS at {url}")
    cmdline.write_bytes(b"nats-server\0-js\0")
    assert main([], environ={}, init_cmdline=cmdline) == 1
    assert capsys.readouterr().err.startswith("healthcheck: process 1 runs no platform service")


def test_an_environment_server_is_healthy_while_its_port_accepts_connections(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    cmdline = tmp_path / "cmdline"
    cmdline.write_bytes(f"python\0-m\0platform_sdk\0--gym-id\0CartPole-v1\0--listen\00.0.0.0:{port}\0".encode())
    try:
        assert main([], environ={}, init_cmdline=cmdline) == 0
        assert capsys.readouterr().out == f"environment-server: healthy (127.0.0.1:{port} accepts connections)\n"
    finally:
        listener.close()
    assert main(["environment-server", "--port", str(port), "--timeout", "1"], environ={}, init_cmdline=cmdline) == 1
    assert capsys.readouterr().err.startswith(
        f"unhealthy: environment-server: nothing accepts connections on 127.0.0.1:{port} (")


def test_the_listen_port_is_read_from_either_spelling() -> None:
    assert listen_port_of_process(b"python\0-m\0platform_sdk\0--listen\00.0.0.0:6000\0") == 6000
    assert listen_port_of_process(b"python\0-m\0platform_sdk\0--listen=[::]:6001\0") == 6001
    assert listen_port_of_process(b"python\0-m\0platform_sdk\0--gym-id\0Pong\0") == 50051
