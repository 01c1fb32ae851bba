"""Managed mode: an environment instance gets no bus credentials, and a malicious factory that
tries the bus anyway (a fake step event on another session, reading another session's events)
is refused by the server; the env host itself works as its own NATS user."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import nats
import pytest
from envhost_testkit import EnvHostProcess, EnvStream, new_session_id, recorded_events, start_session, stop_session
from platform_bus.permissions import SERVICES, NatsUser, authorization_block, service_users
from platform_contracts import subjects
from platform_testing.nats_server import NatsServer
from platform_envhost.instance_env import KEPT
from platform_sdk.launch.parent_death import DIE_WITH_PARENT_VARIABLE
from simulusion.control.v1 import control_pb2 as control_pb

FAKE = b"FAKE STEP EVENT"

# A factory as a malicious user could write it: before building its environment it looks for bus
# credentials in its own environment, then tries the bus with them, without any and with guesses
# (at the server's real address: the worst case, an attacker who knows it). Whatever connects
# publishes a fake step event on the victim's subject (core NATS and JetStream) and subscribes to
# the victim's events. It writes what happened to `report` and builds CartPole as if nothing was.
EVIL_ENV = '''
import asyncio
import json
import os
import threading

import gymnasium as gym

FAKE = %(fake)r


async def _attempt(url, user, password, victim):
    import nats

    result = {"url": url, "user": user, "connected": False, "errors": [], "seen": []}

    async def on_error(exc):
        result["errors"].append(str(exc))

    for _ in range(5):  # a bare connection reset is no answer: a persistent attacker asks again
        try:
            nc = await nats.connect(url, user=user, password=password, error_cb=on_error, allow_reconnect=False,
                                    connect_timeout=2)
            break
        except Exception as exc:
            result["refused"] = f"{type(exc).__name__}: {exc}"
            if "Authorization Violation" in result["refused"]:
                return result
    else:
        return result
    result["connected"] = True

    async def on_msg(msg):
        result["seen"].append(msg.subject)

    await nc.subscribe(f"platform.session.{victim}.>", cb=on_msg)
    await nc.publish(f"platform.session.{victim}.steps", FAKE)
    try:
        await nc.jetstream(timeout=2).publish(f"platform.session.{victim}.steps", FAKE)
        result["stored"] = True
    except Exception as exc:
        result["store_error"] = f"{type(exc).__name__}: {exc}"
    await asyncio.sleep(0.5)
    await nc.close()
    return result


async def _attack(url, victim):
    found = {k: v for k, v in os.environ.items() if k.startswith(("PLATFORM_", "NATS_"))}
    urls = list(dict.fromkeys([url, *[found[k] for k in ("PLATFORM_NATS_URL", "NATS_URL") if k in found]]))
    tries = [(None, None), ("envhost", "envhost"), ("admin", "admin")]
    if "PLATFORM_NATS_USER" in found or "PLATFORM_NATS_PASSWORD" in found:
        tries.append((found.get("PLATFORM_NATS_USER"), found.get("PLATFORM_NATS_PASSWORD")))
    attempts = [await _attempt(u, user, password, victim) for u in urls for user, password in tries]
    return {"found": found, "attempts": attempts}


def make(report, url, victim, **kwargs):
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(asyncio.run(_attack(url, victim))))
    thread.start()
    thread.join(60)
    with open(report, "w") as file:
        json.dump(outcome, file)
    return gym.make("CartPole-v1")
'''


@pytest.fixture
def managed_nats(tmp_path: Path) -> Any:
    """A nats-server with the services' users (and `test`, allowed everything, for the checks)."""
    passwords = {name: secrets.token_urlsafe(32) for name in (*SERVICES, "test")}
    users = [*service_users({name: passwords[name] for name in SERVICES}), NatsUser("test", passwords["test"])]
    server = NatsServer(store_dir=tmp_path / "nats", authorization=authorization_block(users)).start()
    yield server, passwords
    server.stop()


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").partition("=")[::2] for item in raw if item)


async def test_a_malicious_instance_cannot_fake_or_read_another_sessions_events(managed_nats: Any,
                                                                               tmp_path: Path) -> None:
    server, passwords = managed_nats
    host = EnvHostProcess(server.url, PLATFORM_NATS_USER="envhost", PLATFORM_NATS_PASSWORD=passwords["envhost"],
                          NATS_URL=server.url)
    host.start()
    broker = await nats.connect(server.url, user="broker", password=passwords["broker"])  # asks the env host
    test = await nats.connect(server.url, user="test", password=passwords["test"])  # reads the stream
    js = test.jetstream()
    victim, evil = new_session_id(), new_session_id()
    stream: EnvStream | None = None
    try:
        # Another user's recorded session: its events reach the stream (the env host's own user works).
        assert not (await start_session(broker, host.host_id, victim, record=True)).HasField("error")
        stream = EnvStream(host.address, victim)
        await stream.reset(seed=1)
        for _ in range(3):
            await stream.step(0)
        assert len(await recorded_events(js, victim, 4)) >= 4
        victim_subjects = f"platform.session.{victim}.>"
        before = (await js.stream_info(subjects.SESSIONS_STREAM, subjects_filter=victim_subjects)).state.subjects

        folder = tmp_path / "evil"
        folder.mkdir()
        (folder / "evil_env.py").write_text(EVIL_ENV % {"fake": FAKE})
        report = tmp_path / "report.json"
        entry = control_pb.CatalogEntry(id="evil", factory="evil_env:make", path=str(folder))
        kwargs = json.dumps({"report": str(report), "url": server.url, "victim": victim})
        reply = await start_session(broker, host.host_id, evil, entry=entry, kwargs_json=kwargs)
        assert not reply.HasField("error"), reply.error
        outcome = json.loads(report.read_text())

        # It had nothing to find: no NATS URL, user or password, nor any other platform setting.
        assert outcome["found"] == {}
        instance_env = _environ(host.instance_pid(evil))
        # (the launcher adds its own pid, PLATFORM_DIE_WITH_PARENT, for the parent-death signal: no secret)
        allowed = KEPT | {DIE_WITH_PARENT_VARIABLE}
        assert not [k for k in instance_env if k.startswith(("PLATFORM_", "NATS_")) and k not in allowed], sorted(instance_env)
        assert _environ(host.process.pid)["PLATFORM_NATS_USER"] == "envhost"  # while its env host has them

        # Every try was refused by the server: no credentials, or wrong ones.
        assert len(outcome["attempts"]) == 3
        for attempt in outcome["attempts"]:
            assert not attempt["connected"], attempt
            assert "Authorization Violation" in attempt["refused"], attempt
            assert not attempt["seen"] and "stored" not in attempt
        log = server.log_path.read_text()
        assert log.count("authentication error") >= 3

        # No fake event reached the victim's events.
        after = (await js.stream_info(subjects.SESSIONS_STREAM, subjects_filter=victim_subjects)).state.subjects
        assert after == before
        sub = await js.subscribe(victim_subjects, ordered_consumer=True)
        stored = [await sub.next_msg(timeout=5) for _ in range(sum(after.values()))]
        await sub.unsubscribe()
        assert all(FAKE not in message.data for message in stored)
        assert not [line for line in log.splitlines() if "Violation" in line and "user:envhost" in line]

        # The instance still serves its session as usual.
        evil_stream = EnvStream(host.address, evil)
        assert not (await evil_stream.reset(seed=1)).HasField("error")
        await evil_stream.channel.close()
    finally:
        if stream is not None:
            await stream.channel.close()
        for session in (victim, evil):
            await stop_session(broker, host.host_id, session)
        await broker.close()
        await test.close()
        host.cleanup()
