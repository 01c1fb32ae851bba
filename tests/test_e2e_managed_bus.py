"""The launcher in managed mode (PLATFORM_MODE=managed): its nats-server takes the rendered users,
each service connects as its own, a client without credentials is refused, and the whole platform
runs a recorded session with no permission violation and no password in any log."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import nats
import platform_sdk
from platform_bus import NatsCredentials, connect, flush_queued
from platform_contracts import subjects
from platform_local import SERVICES, LocalPlatform
from platform_testing.nats_refusal import refusal
from platform_testing.platform import clean_env, running_platform
from platform_testing.waiting import wait_for

MANAGED = {"PLATFORM_MODE": "managed"}


class _Said(logging.Handler):
    """The lines logged to a logger."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    async def wait_for(self, text: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not any(text in line.lower() for line in self.lines):
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.02)
        return True


async def test_managed_launcher_nats_takes_each_service_as_its_own_user(tmp_path: Path) -> None:
    platform = LocalPlatform(tmp_path / "data", extra_env=MANAGED, base_env=clean_env(), services=())
    with platform:
        config = platform.data_dir / "nats" / "nats-server.conf"
        assert config.stat().st_mode & 0o777 == 0o600
        assert "Authorization Violation" in await refusal(platform.nats_url)
        for name in SERVICES:
            env = platform._spec(name).env
            assert env["PLATFORM_NATS_USER"] == name and env["PLATFORM_NATS_URL"] == platform.nats_url
            assert env["PLATFORM_NATS_PASSWORD"] not in env["PLATFORM_NATS_URL"]
            credentials = NatsCredentials.from_env(env)
            said = _Said()
            logger = logging.getLogger(f"test_e2e_managed_bus.{name}")
            logger.addHandler(said)
            nc = await connect(platform.nats_url, name=f"platform-{name}", timeout=3, credentials=credentials,
                               logger=logger)  # a refusal once connected: a warning there
            await nc.publish(subjects.BROKER_CREATE_SESSION, b"x")  # only the gateway may ask the broker
            await flush_queued(nc)
            refused = await said.wait_for("permissions violation for publish", 0.5 if name == "gateway" else 10)
            assert refused == (name != "gateway"), (name, said.lines)
            await nc.close()
        # One service's password is not another's.
        wrong = await refusal(platform.nats_url, credentials=NatsCredentials("broker", platform.nats_passwords["recorder"]))
        assert "as user 'broker'" in wrong, wrong


async def _plain_client_refused(url: str) -> str:
    """Why the server refuses a plain nats-py client, asked again after a bare connection reset
    (the server closes at once after its answer; a busy client may read the reset first)."""
    reason = ""
    for _ in range(5):
        try:
            nc = await nats.connect(url, allow_reconnect=False, connect_timeout=2)
        except Exception as exc:  # noqa: BLE001 - whatever nats-py raises, the server refused
            reason = str(exc)
            if "Authorization Violation" in reason:
                break
            continue
        await nc.close()
        return ""
    return reason


def test_managed_platform_runs_a_recorded_session_within_its_permissions(tmp_path: Path) -> None:
    with running_platform(tmp_path, extra_env=MANAGED) as stack:
        with platform_sdk.connect("cartpole", url=stack.url, record=True) as env:
            session_id = env.session_id
            env.reset(seed=3)
            for _ in range(5):
                env.step(0)
        meta = stack.recordings / session_id / "meta.json"

        def closed() -> bool:
            return meta.exists() and json.loads(meta.read_text()).get("status") == "closed"

        wait_for(closed, what=f"recording {meta} closed")
        assert "Authorization Violation" in asyncio.run(_plain_client_refused(stack.nats_url))
        passwords = list(stack.platform.nats_passwords.values())
        logs = {path.name: path.read_text(errors="replace") for path in stack.logs_dir.glob("*.log")}
    assert {"nats.log", "broker.log", "envhost.log", "recorder.log", "gateway.log"} <= set(logs)
    assert [line for line in logs["nats.log"].splitlines() if "Violation" in line] == []
    for name, text in logs.items():
        assert not [p for p in passwords if p in text], f"a NATS password in {name}"
