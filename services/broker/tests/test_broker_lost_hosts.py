"""Sessions of an env host that went silent are marked crashed with the reason, once the broker
has been connected to NATS for a whole live window; never while NATS is away."""

from __future__ import annotations

from pathlib import Path

import nats
from platform_broker.hosts import HostRegistry
from platform_broker.lost_hosts import LostHostSweeper, lost_host_reason
from platform_broker.store import CRASHED, RUNNING, SessionStore
from simulusion.control.v1 import control_pb2


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def running_on(store: SessionStore, session_id: str, host_id: str) -> None:
    await store.insert(control_pb2.SessionInfo(id=session_id, host_id=host_id, host_address="127.0.0.1:1",
                                               state=RUNNING, created_at=1.0, last_active_at=1.0))


async def test_a_silent_hosts_sessions_are_crashed_and_a_live_ones_kept(tmp_path: Path, broker_nats) -> None:
    clock = Clock()
    hosts = HostRegistry(live_window=10.0, clock=clock)
    store = SessionStore.from_url(f"sqlite:///{tmp_path}/platform.db")
    await store.create_tables()
    nc = await nats.connect(broker_nats.url)
    try:
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="lost-host", capacity=4))
        clock.now += 8  # lost-host's last heartbeat was 8 s ago when the broker connected
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="live-host", capacity=4))
        await running_on(store, "s-000000000001", "lost-host")
        await running_on(store, "s-000000000002", "live-host")
        sweeper = LostHostSweeper(nc, store, hosts, clock=clock)

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
        sweeper = LostHostSweeper(nc, store, hosts, clock=clock)
        await nc.close()  # as good as a NATS outage: no heartbeat can come
        clock.now += 30
        assert await sweeper.sweep_once() == []
        sweeper.nc = nc = await nats.connect(broker_nats.url)  # back: the hosts get a window to be heard
        clock.now += 5
        assert await sweeper.sweep_once() == []
        clock.now += 6
        assert await sweeper.sweep_once() == ["s-000000000003"]
    finally:
        await nc.close()
        await store.close()
