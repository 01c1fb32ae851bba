"""Sessions of an env host that went silent are marked crashed with the reason, once the broker
has been connected to NATS for a whole live window; never while NATS is away. Their CRASHED
events go to JetStream (kept and sent again while it does not take them), and the broker's own
lifecycle consumer takes them as a no-op."""

from __future__ import annotations

from pathlib import Path

import nats
from nats.js.errors import NotFoundError
from platform_broker.hosts import HostRegistry
from platform_broker.lifecycle import LifecycleConsumer
from platform_broker.lost_hosts import LostHostSweeper, lost_host_reason
from platform_broker.session_endings import MSG_ID_HEADER, SessionEndings
from platform_broker.store import CRASHED, RUNNING, SessionStore
from platform_contracts import streams, subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def running_on(store: SessionStore, session_id: str, host_id: str) -> None:
    await store.insert(control_pb2.SessionInfo(id=session_id, host_id=host_id, host_address="127.0.0.1:1",
                                               state=RUNNING, created_at=1.0, last_active_at=1.0,
                                               options=SessionOptions(env_id="cartpole", record=True)))


async def stored_lifecycle_event(js, session_id: str) -> tuple[events_pb2.SessionEvent, dict[str, str]] | None:
    """The last lifecycle event JetStream holds for the session, with its headers; None if none."""
    try:
        msg = await js.get_last_msg(subjects.SESSIONS_STREAM, subjects.session_lifecycle(session_id))
    except NotFoundError:
        return None
    return events_pb2.SessionEvent.FromString(msg.data), dict(msg.headers or {})


async def test_a_silent_hosts_sessions_are_crashed_and_a_live_ones_kept(tmp_path: Path, broker_nats) -> None:
    clock = Clock()
    hosts = HostRegistry(live_window=10.0, clock=clock)
    store = SessionStore.from_url(f"sqlite:///{tmp_path}/platform.db")
    await store.create_tables()
    nc = await nats.connect(broker_nats.url)
    js = nc.jetstream()
    await streams.ensure_sessions_stream(js)
    try:
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="lost-host", capacity=4))
        clock.now += 8  # lost-host's last heartbeat was 8 s ago when the broker connected
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="live-host", capacity=4))
        await running_on(store, "s-000000000001", "lost-host")
        await running_on(store, "s-000000000002", "live-host")
        sweeper = LostHostSweeper(nc, store, hosts, SessionEndings(js), clock=clock)

        clock.now += 5  # lost-host silent for 13 s, but the broker has listened for only 5
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="live-host", capacity=4))
        assert await sweeper.sweep_once() == []

        clock.now += 6
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="live-host", capacity=4))
        assert await sweeper.sweep_once() == ["s-000000000001"]
        lost = await store.get("s-000000000001")
        assert lost is not None and lost.state == CRASHED
        assert lost.reason == lost_host_reason("lost-host", 10.0) == "its env host lost-host stopped (no heartbeat for 10 s)"
        kept = await store.get("s-000000000002")
        assert kept is not None and kept.state == RUNNING
        assert await sweeper.sweep_once() == []  # ended once

        stored = await stored_lifecycle_event(js, "s-000000000001")
        assert stored is not None, "the lost host's session has its CRASHED event in JetStream"
        event, headers = stored
        assert event.kind == events_pb2.SESSION_EVENT_KIND_CRASHED
        assert (event.session_id, event.host_id, event.reason) == ("s-000000000001", "lost-host", lost.reason)
        assert event.last_seq == 0, "what the dead env host published is unknown"
        assert event.options.env_id == "cartpole" and event.options.record, "the recorder knows what it records"
        assert headers[MSG_ID_HEADER] == "s-000000000001:crashed"  # the env host's id for its own CRASHED
        assert await stored_lifecycle_event(js, "s-000000000002") is None, "nothing for the live host's session"

        # The broker's lifecycle consumer gets the event too: the session ended already, nothing changes.
        assert await LifecycleConsumer(js, store).apply(event) is False
        again = await store.get("s-000000000001")
        assert again is not None and (again.state, again.reason) == (CRASHED, lost.reason)
    finally:
        await nc.close()
        await store.close()


async def test_nothing_is_crashed_while_nats_is_away_nor_a_window_after(tmp_path: Path, broker_nats) -> None:
    clock = Clock()
    hosts = HostRegistry(live_window=10.0, clock=clock)
    store = SessionStore.from_url(f"sqlite:///{tmp_path}/platform.db")
    await store.create_tables()
    nc = await nats.connect(broker_nats.url)
    try:
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="quiet-host", capacity=4))
        await running_on(store, "s-000000000003", "quiet-host")
        sweeper = LostHostSweeper(nc, store, hosts, SessionEndings(nc.jetstream()), clock=clock)
        await nc.close()  # as good as a NATS outage: no heartbeat can come
        clock.now += 30
        assert await sweeper.sweep_once() == []
        sweeper.nc = nc = await nats.connect(broker_nats.url)  # back: the hosts get a window to be heard
        sweeper.endings.js = nc.jetstream()
        clock.now += 5
        assert await sweeper.sweep_once() == []
        clock.now += 6
        assert await sweeper.sweep_once() == ["s-000000000003"]
    finally:
        await nc.close()
        await store.close()


async def test_a_crashed_event_jetstream_does_not_take_is_sent_again_at_the_next_sweep(
        tmp_path: Path, broker_nats, unique_prefix: str) -> None:
    clock = Clock()
    hosts = HostRegistry(live_window=10.0, clock=clock)
    store = SessionStore.from_url(f"sqlite:///{tmp_path}/platform.db")
    await store.create_tables()
    nc = await nats.connect(broker_nats.url)
    js = nc.jetstream()
    session_id = f"s-{unique_prefix}"
    try:
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="gone-host", capacity=4))
        await running_on(store, session_id, "gone-host")
        endings = SessionEndings(js, timeout=2.0)
        sweeper = LostHostSweeper(nc, store, hosts, endings, clock=clock)
        await js.delete_stream(subjects.SESSIONS_STREAM)  # no stream takes the event for now
        clock.now += 11
        assert await sweeper.sweep_once() == [session_id]
        crashed = await store.get(session_id)
        assert crashed is not None and crashed.state == CRASHED, "a 410 at once, stored event or not"
        assert endings.pending == [session_id]

        await streams.ensure_sessions_stream(js)
        clock.now += 2
        assert await sweeper.sweep_once() == [], "the session was ended once"
        assert endings.pending == []
        stored = await stored_lifecycle_event(js, session_id)
        assert stored is not None and stored[0].kind == events_pb2.SESSION_EVENT_KIND_CRASHED
        assert stored[0].reason == lost_host_reason("gone-host", 10.0)
    finally:
        await nc.close()
        await store.close()
