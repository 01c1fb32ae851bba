"""The services' NATS users (`platform_bus.permissions`) on a real nats-server: each does its round
trips, is refused outside its subjects, and a client without credentials is refused."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import nats
import pytest
from nats.js.api import AckPolicy, ConsumerConfig, KeyValueConfig
from platform_bus import NatsCredentials, NatsUnreachableError, connect, flush_queued
from platform_bus.permissions import (
    SERVICE_PERMISSIONS,
    SERVICES,
    NatsUser,
    Permissions,
    authorization_block,
    service_users,
)
from platform_contracts import subjects
from platform_contracts.streams import ensure_sessions_stream
from platform_testing.nats_refusal import refusal
from platform_testing.nats_server import NatsServer

STREAM = subjects.SESSIONS_STREAM
TEST_USER = "test"  # every permission: sets up and inspects, as no service may


class Bus:
    """The server and the passwords of its users."""

    def __init__(self, server: NatsServer, passwords: dict[str, str]) -> None:
        self.server = server
        self.passwords = passwords

    def credentials(self, user: str) -> NatsCredentials:
        return NatsCredentials(user, self.passwords[user])


class Client:
    """A user's connection that keeps the server's permission errors."""

    def __init__(self, nc: Any, errors: list[str]) -> None:
        self.nc = nc
        self.errors = errors

    async def refused(self, what: str, subject: str, timeout: float = 5.0) -> bool:
        """Whether the server said it refuses `what` ("publish", "subscription") of `subject`."""
        wanted = f'permissions violation for {what} to "{subject}"'.lower()  # nats-py lowercases it
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(wanted in error.lower() for error in self.errors):
                return True
            await asyncio.sleep(0.02)
        return False


@pytest.fixture(scope="module")
def bus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bus]:
    passwords = {name: secrets.token_urlsafe(32) for name in (*SERVICES, TEST_USER)}
    users = [*service_users({name: passwords[name] for name in SERVICES}), NatsUser(TEST_USER, passwords[TEST_USER])]
    server = NatsServer(store_dir=tmp_path_factory.mktemp("nats-managed"), authorization=authorization_block(users))
    server.start()
    yield Bus(server, passwords)
    server.stop()


@pytest.fixture
async def clients(bus: Bus) -> AsyncIterator[Any]:
    opened: list[Any] = []

    async def open_(user: str) -> Client:
        errors: list[str] = []

        async def on_error(exc: Exception) -> None:
            errors.append(str(exc))

        nc = await nats.connect(bus.server.url, user=user, password=bus.passwords[user], error_cb=on_error,
                                max_reconnect_attempts=0)
        opened.append(nc)
        return Client(nc, errors)

    yield open_
    for nc in opened:
        await nc.close()


def _matches(pattern: str, subject: str) -> bool:
    """NATS wildcard matching: `*` one token, `>` one or more at the end."""
    want, got = pattern.split("."), subject.split(".")
    for i, token in enumerate(want):
        if token == ">":
            return len(got) > i
        if i >= len(got) or (token != "*" and token != got[i]):
            return False
    return len(want) == len(got)


def _allowed(subject: str, kind: str) -> set[str]:
    return {name for name, perms in SERVICE_PERMISSIONS.items()
            if any(_matches(p, subject) for p in getattr(perms, kind))}


def _request_subjects() -> list[str]:
    """Every request subject of platform_contracts.subjects (the constants, the env host's per host)."""
    constants = [v for k, v in vars(subjects).items() if k.isupper() and isinstance(v, str) and v.startswith("platform.")
                 and "*" not in v and ">" not in v and v not in (subjects.ENVHOST_HEARTBEAT, subjects.TRACES_RECENT)]
    per_host = [f("h1") for f in (subjects.envhost_start, subjects.envhost_stop, subjects.envhost_list,
                                  subjects.envhost_claim)]
    return sorted(constants + per_host)


@pytest.mark.parametrize("subject", _request_subjects())
def test_every_request_subject_has_one_asking_and_one_answering_service(subject: str) -> None:
    askers, answerers = _allowed(subject, "publish"), _allowed(subject, "subscribe")
    assert askers and answerers, (subject, askers, answerers)
    assert not askers & answerers, "no service asks itself"


def test_the_gateway_gathers_recent_spans_from_every_service() -> None:
    """A scatter-gather: the gateway asks, every service answers (the gateway too, for its own spans)."""
    assert _allowed(subjects.TRACES_RECENT, "publish") == {"gateway"}
    assert _allowed(subjects.TRACES_RECENT, "subscribe") == set(SERVICE_PERMISSIONS)


def test_session_events_are_published_by_the_env_host_and_the_broker_only() -> None:
    assert _allowed(subjects.session_step_batches("s1"), "publish") == {"envhost"}
    assert _allowed(subjects.session_steps("s1"), "publish") == {"envhost"}
    assert _allowed(subjects.session_snapshots("s1"), "publish") == {"envhost"}
    assert _allowed(subjects.session_lifecycle("s1"), "publish") == {"envhost", "broker"}
    assert _allowed(subjects.session_steps("s1"), "subscribe") == set()  # read through durable consumers only
    assert _allowed(f"$JS.API.STREAM.DELETE.{STREAM}", "publish") == set()
    # the recorder deletes the step events it has written, and gives the stream its limit
    assert _allowed(f"$JS.API.STREAM.PURGE.{STREAM}", "publish") == {"recorder"}
    assert _allowed(f"$JS.API.STREAM.UPDATE.{STREAM}", "publish") == {"recorder"}


def test_authorization_block_refuses_what_would_break_the_config() -> None:
    with pytest.raises(ValueError, match="quotes"):
        authorization_block([NatsUser("broker", 'pa"ss', SERVICE_PERMISSIONS["broker"])])
    with pytest.raises(ValueError, match="needs a name and a password"):
        authorization_block([NatsUser("broker", "")])
    with pytest.raises(ValueError, match="quotes"):
        authorization_block([NatsUser("x", "p", Permissions(publish=("a\nb",), subscribe=()))])
    with pytest.raises(KeyError):
        service_users({"instance": "p"})  # no user for environment instances
    assert "secret-password" not in repr(NatsUser("broker", "secret-password"))
    assert "secret-password" not in repr(NatsCredentials("broker", "secret-password"))


async def test_a_client_without_credentials_or_with_a_wrong_password_is_refused(bus: Bus) -> None:
    without = await refusal(bus.server.url)
    assert "Authorization Violation" in without
    assert "without credentials (PLATFORM_NATS_USER unset)" in without
    wrong = "not-" + bus.passwords["broker"]
    refused = await refusal(bus.server.url, credentials=NatsCredentials("broker", wrong))
    assert "Authorization Violation" in refused and "as user 'broker'" in refused
    assert wrong not in refused
    in_url = await refusal(f"nats://broker:{wrong}@127.0.0.1:{bus.server.port}")  # a password in a URL: not shown
    assert wrong not in in_url and f"nats://***@127.0.0.1:{bus.server.port}" in in_url


async def test_connect_takes_the_service_user_from_its_settings(bus: Bus, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLATFORM_NATS_USER", "gateway")
    monkeypatch.setenv("PLATFORM_NATS_PASSWORD", bus.passwords["gateway"])
    nc = await connect(bus.server.url, name="platform-gateway", timeout=3)
    try:
        assert nc.is_connected
    finally:
        await nc.close()
    monkeypatch.delenv("PLATFORM_NATS_PASSWORD")
    with pytest.raises(NatsUnreachableError, match="PLATFORM_NATS_USER is set but PLATFORM_NATS_PASSWORD is not"):
        await connect(bus.server.url, name="platform-gateway", timeout=3)


async def _answer(client: Client, subject: str, queue: str = "") -> Any:
    async def reply(msg: Any) -> None:
        await msg.respond(b"answer to " + msg.data)

    return await client.nc.subscribe(subject, queue=queue, cb=reply)


async def test_the_gateway_asks_the_broker_and_the_recorder(clients: Any) -> None:
    gateway, broker, recorder = await clients("gateway"), await clients("broker"), await clients("recorder")
    asked = [v for k, v in vars(subjects).items() if k.startswith(("BROKER_", "RECORDER_")) and isinstance(v, str)
             and v.startswith("platform.")]
    for subject in asked:
        answerer = broker if subject.startswith("platform.broker.") else recorder
        await _answer(answerer, subject, queue=subjects.BROKER_QUEUE if answerer is broker else "recorder")
    await flush_queued(broker.nc)
    await flush_queued(recorder.nc)
    for subject in asked:
        assert (await gateway.nc.request(subject, b"q", timeout=5)).data == b"answer to q", subject
    assert broker.errors == recorder.errors == gateway.errors == []


async def test_the_broker_drives_env_hosts_and_env_hosts_beat_and_save_snapshots(clients: Any) -> None:
    broker, envhost, recorder = await clients("broker"), await clients("envhost"), await clients("recorder")
    control = [f("h1") for f in (subjects.envhost_start, subjects.envhost_stop, subjects.envhost_list,
                                 subjects.envhost_claim)]
    for subject in control:
        await _answer(envhost, subject)
    for subject in (subjects.RECORDER_SAVE_SNAPSHOT, subjects.RECORDER_GET_SNAPSHOT):
        await _answer(recorder, subject, queue="recorder")
    beats: asyncio.Queue[bytes] = asyncio.Queue()

    async def on_beat(msg: Any) -> None:
        await beats.put(msg.data)

    await broker.nc.subscribe(subjects.ENVHOST_HEARTBEAT, cb=on_beat)
    for client in (broker, envhost, recorder):
        await flush_queued(client.nc)
    for subject in control:
        assert (await broker.nc.request(subject, b"q", timeout=5)).data == b"answer to q", subject
    for subject in (subjects.RECORDER_SAVE_SNAPSHOT, subjects.RECORDER_GET_SNAPSHOT):
        assert (await envhost.nc.request(subject, b"s", timeout=5)).data == b"answer to s", subject
    await envhost.nc.publish(subjects.ENVHOST_HEARTBEAT, b"beat")
    assert await asyncio.wait_for(beats.get(), 5) == b"beat"
    assert broker.errors == envhost.errors == recorder.errors == []


async def test_session_events_go_from_the_env_host_to_the_durable_consumers(clients: Any) -> None:
    envhost, broker, recorder = await clients("envhost"), await clients("broker"), await clients("recorder")
    session = f"s{secrets.token_hex(6)}"
    ejs, bjs, rjs = envhost.nc.jetstream(), broker.nc.jetstream(), recorder.nc.jetstream()
    for js in (ejs, bjs, rjs):  # whoever starts first makes the stream
        await ensure_sessions_stream(js)
    published = [subjects.session_lifecycle(session), subjects.session_steps(session),
                 subjects.session_step_batches(session), subjects.session_snapshots(session)]
    for subject in published:
        await ejs.publish(subject, b"event", timeout=5)
    ack = await bjs.publish(subjects.session_lifecycle(session), b"closed by the broker", timeout=5)
    assert ack.stream == STREAM

    # The broker's durable consumer of lifecycle events (as platform_broker.lifecycle makes it).
    config = ConsumerConfig(durable_name=subjects.BROKER_CONSUMER, filter_subject=subjects.SESSION_LIFECYCLE_WILDCARD,
                            ack_policy=AckPolicy.EXPLICIT)
    psub = await bjs.pull_subscribe(subjects.SESSION_LIFECYCLE_WILDCARD, durable=subjects.BROKER_CONSUMER,
                                    stream=STREAM, config=config)
    got = [m for m in await psub.fetch(10, timeout=5) if m.subject == subjects.session_lifecycle(session)]
    for msg in got:
        await msg.ack()
    assert [m.data for m in got] == [b"event", b"closed by the broker"]
    # A session's last lifecycle event, read ahead of the consumer (LifecycleConsumer.catch_up).
    last = await bjs.get_last_msg(STREAM, subjects.session_lifecycle(session))
    assert last.data == b"closed by the broker"

    # The recorder's durable consumer of the session's partition (as platform_recorder.writing.consumer
    # makes it), and the key-value bucket of its leases (platform_recorder.partitions).
    partition = subjects.session_partition(session)
    consumer = subjects.recorder_consumer(partition)
    config = ConsumerConfig(name=consumer, durable_name=consumer,
                            filter_subject=subjects.partition_events(partition), ack_policy=AckPolicy.ALL)
    await rjs.add_consumer(STREAM, config=config)
    assert (await rjs.consumer_info(STREAM, consumer)).config.filter_subject == f"platform.session.*.*.{partition}"
    leases = await rjs.create_key_value(config=KeyValueConfig(bucket=subjects.RECORDER_LEASES_BUCKET, ttl=10))
    revision = await leases.create(f"partition.{partition}", b"recorder-1")
    await leases.update(f"partition.{partition}", b"recorder-1", last=revision)
    assert (await leases.get(f"partition.{partition}")).value == b"recorder-1"
    await leases.delete(f"partition.{partition}")
    inbox = recorder.nc.new_inbox()
    pulled: asyncio.Queue[Any] = asyncio.Queue()

    async def on_msg(msg: Any) -> None:
        await pulled.put(msg)

    await recorder.nc.subscribe(inbox, cb=on_msg)
    await recorder.nc.publish(f"$JS.API.CONSUMER.MSG.NEXT.{STREAM}.{consumer}",
                              json.dumps({"batch": 100, "expires": int(2e9)}).encode(), reply=inbox)
    mine: list[Any] = []
    while len(mine) < len(published) + 1:
        msg = await asyncio.wait_for(pulled.get(), 5)
        if msg.subject.startswith(f"platform.session.{session}."):
            mine.append(msg)
    await mine[-1].ack()  # AckPolicy.ALL: the last acks them all
    assert [m.subject for m in mine] == [*published, subjects.session_lifecycle(session)]
    await rjs.delete_consumer(STREAM, consumer)
    for client in (envhost, broker, recorder):
        assert client.errors == [], client.errors


REFUSED = [
    ("recorder", "publish", subjects.BROKER_CREATE_SESSION),
    ("recorder", "publish", subjects.session_step_batches("victim")),
    ("recorder", "subscription", subjects.BROKER_CREATE_SESSION),
    ("gateway", "publish", subjects.session_steps("victim")),
    ("gateway", "publish", subjects.envhost_start("h1")),
    ("gateway", "subscription", subjects.SESSION_EVENTS_WILDCARD),
    ("gateway", "subscription", subjects.BROKER_CREATE_SESSION),
    ("broker", "publish", subjects.session_step_batches("victim")),
    ("broker", "publish", subjects.RECORDER_DELETE_RECORDING),
    ("broker", "subscription", subjects.RECORDER_LIST_RECORDINGS),
    ("broker", "publish", f"$JS.API.CONSUMER.DELETE.{STREAM}.{subjects.recorder_consumer(0)}"),
    ("broker", "publish", f"$KV.{subjects.RECORDER_LEASES_BUCKET}.partition.0"),
    ("envhost", "publish", subjects.BROKER_CREATE_SESSION),
    ("envhost", "publish", subjects.RECORDER_DELETE_RECORDING),
    ("envhost", "subscription", "platform.broker.>"),
    ("envhost", "subscription", subjects.session_lifecycle("victim")),
    ("envhost", "publish", f"$JS.API.CONSUMER.MSG.NEXT.{STREAM}.{subjects.recorder_consumer(0)}"),
    ("envhost", "publish", f"$KV.{subjects.RECORDER_LEASES_BUCKET}.member.0"),
    *[(name, "publish", f"$JS.API.STREAM.DELETE.{STREAM}") for name in SERVICES],
    *[(name, "publish", f"$JS.API.STREAM.{verb}.{STREAM}") for name in SERVICES if name != "recorder"
      for verb in ("PURGE", "UPDATE")],
    *[(name, "subscription", ">") for name in SERVICES],
]


@pytest.mark.parametrize(("user", "what", "subject"), REFUSED)
async def test_a_service_is_refused_outside_its_subjects(clients: Any, user: str, what: str, subject: str) -> None:
    client = await clients(user)
    if what == "publish":
        await client.nc.publish(subject, b"fake")
    else:
        await client.nc.subscribe(subject)
    await flush_queued(client.nc)
    assert await client.refused(what, subject), client.errors
    assert client.nc.is_connected  # refused, not thrown out


async def test_the_stream_outlives_a_service_that_tries_to_delete_it(clients: Any) -> None:
    envhost, test = await clients("envhost"), await clients(TEST_USER)
    await ensure_sessions_stream(envhost.nc.jetstream())
    with pytest.raises(asyncio.TimeoutError):  # the request never reaches JetStream
        await envhost.nc.jetstream(timeout=1.0).delete_stream(STREAM)
    assert (await test.nc.jetstream().stream_info(STREAM)).config.name == STREAM


def test_the_permissions_config_file_is_private(bus: Bus) -> None:
    config = Path(bus.server.store_dir) / "nats-server.conf"
    assert config.stat().st_mode & 0o777 == 0o600
    assert bus.passwords["broker"] in config.read_text()
