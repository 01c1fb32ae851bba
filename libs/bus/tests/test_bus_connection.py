"""`platform_bus.connect` against real nats-servers: one line when unreachable, reconnects after a
restart; `flush_queued` leaves no window in which another connection finds nobody listening."""

from __future__ import annotations

import asyncio
import time

import pytest
from platform_bus import BusUnavailableError, NatsUnreachableError, connect, request, flush_queued
from platform_testing.nats_server import NatsServer
from platform_testing.ports import free_port


async def test_unreachable_nats_is_one_line_naming_the_url() -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(NatsUnreachableError) as caught:
        await connect(url, name="test", timeout=3)
    assert time.monotonic() - started < 4
    message = str(caught.value)
    assert message.startswith(f"cannot connect to NATS at {url} within 3 s (")
    assert "\n" not in message


async def test_several_servers_are_named_in_the_error() -> None:
    urls = [f"nats://127.0.0.1:{free_port()}", f"nats://127.0.0.1:{free_port()}"]
    with pytest.raises(NatsUnreachableError, match=f"at {urls[0]}, {urls[1]} within"):
        await connect(urls, name="test", timeout=3)
    with pytest.raises(NatsUnreachableError, match=f"at {urls[0]}, {urls[1]} within"):
        await connect(f"{urls[0]}, {urls[1]}", name="test", timeout=3)  # as PLATFORM_NATS_URL may say


async def test_the_client_reconnects_after_a_nats_restart(tmp_path) -> None:
    server = NatsServer(store_dir=tmp_path / "nats").start()
    try:
        nc = await connect(server.url, name="test")
        got: asyncio.Queue[bytes] = asyncio.Queue()

        async def on_message(msg) -> None:
            await got.put(msg.data)

        await nc.subscribe("restart.test", cb=on_message)
        await nc.flush()
        server.stop(kill=True)
        await asyncio.sleep(1.5)  # several failed reconnect attempts: it must not give up
        assert not nc.is_closed
        server.start()
        deadline = time.monotonic() + 15
        while not nc.is_connected and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert nc.is_connected
        await nc.publish("restart.test", b"after")  # the subscription was made again
        assert await asyncio.wait_for(got.get(), 5) == b"after"
        await nc.close()
    finally:
        server.stop()


async def test_a_settled_subscription_answers_the_very_next_request_from_another_connection(nats_server) -> None:
    """A flush alone lost about one request in ten here (nats-py sends its PING ahead of queued SUBs)."""
    asker = await connect(nats_server.url, name="asker")
    try:
        for attempt in range(60):
            answerer = await connect(nats_server.url, name=f"answerer-{attempt}")

            async def answer(msg) -> None:
                await msg.respond(b"here")

            await answerer.subscribe(f"settle.test.{attempt}", cb=answer)
            await flush_queued(answerer)
            try:
                reply = await request(asker, f"settle.test.{attempt}", b"", timeout=5, service="the answerer")
            except BusUnavailableError as exc:
                raise AssertionError(f"attempt {attempt}: the settled subscription was not there ({exc})") from exc
            finally:
                await answerer.close()
            assert reply.data == b"here"
    finally:
        await asker.close()
