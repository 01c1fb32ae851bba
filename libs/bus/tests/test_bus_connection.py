"""`platform_bus.connect` against real nats-servers: one line when unreachable, reconnects after a restart."""

from __future__ import annotations

import asyncio
import time

import pytest
from platform_bus import NatsUnreachableError, connect
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
