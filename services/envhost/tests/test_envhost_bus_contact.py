"""The env host's watch on its contact with NATS (platform_envhost.bus_contact), on a real
nats-server that stops answering (SIGSTOP: the connection stays open, no PONG comes back, as when
the network is cut) and answers again (SIGCONT)."""

from __future__ import annotations

import asyncio
import os
import signal
import time

from platform_bus import connect
from platform_envhost.bus_contact import bus_contact_loop, lost_contact_reason
from platform_testing.nats_server import NatsServer


async def test_a_silent_server_fences_once_after_fence_after_and_contact_comes_back(tmp_path) -> None:
    with NatsServer(tmp_path / "nats") as server:
        assert server.process is not None
        nc = await connect(server.url, name="bus-contact-test")
        lost: list[tuple[float, float]] = []  # (seconds silent, when)

        async def on_lost(seconds: float) -> None:
            lost.append((seconds, time.monotonic()))

        watch = asyncio.create_task(bus_contact_loop(nc, 0.2, 1.0, on_lost))
        try:
            await asyncio.sleep(1.5)
            assert lost == [], "a server that answers is in contact"
            os.kill(server.process.pid, signal.SIGSTOP)
            stopped_at = time.monotonic()
            try:
                await asyncio.sleep(2.5)
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            assert len(lost) == 1, lost  # once, not at every failed round trip
            seconds, when = lost[0]
            assert 1.0 < seconds < 1.8 and when - stopped_at < 1.8, (seconds, when - stopped_at)
            await asyncio.sleep(1.0)  # contact again: a later silence fences again
            os.kill(server.process.pid, signal.SIGSTOP)
            try:
                await asyncio.sleep(2.0)
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            assert len(lost) == 2, lost
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
            await nc.close()


def test_the_reason_names_the_host_and_the_silence() -> None:
    assert lost_contact_reason("host-1", 7.4) == "its env host host-1 lost contact with NATS for 7 s"


async def test_a_ping_in_flight_when_the_connection_is_replaced_does_not_count_as_silence(tmp_path) -> None:
    """nats-py drops the PONG futures of the old connection at a reconnect: the watch sends a
    new PING then, instead of waiting for ever on the lost one and fencing a host in contact."""
    with NatsServer(tmp_path / "nats") as server:
        assert server.process is not None
        nc = await connect(server.url, name="bus-contact-reconnect-test")
        lost: list[float] = []

        async def on_lost(seconds: float) -> None:
            lost.append(seconds)

        watch = asyncio.create_task(bus_contact_loop(nc, 0.2, 3.0, on_lost))
        try:
            await asyncio.sleep(0.5)
            os.kill(server.process.pid, signal.SIGSTOP)  # a PING goes out and gets no PONG...
            await asyncio.sleep(0.5)
            server.stop(kill=True)  # ...then the server dies and comes back: a new connection
            server.start()
            deadline = time.monotonic() + 10
            while nc.stats["reconnects"] < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert nc.stats["reconnects"] >= 1 and nc.is_connected
            await asyncio.sleep(4.0)  # longer than fence_after after the last PONG of the old one
            assert lost == [], "the host is in contact through its new connection"
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
            await nc.close()
