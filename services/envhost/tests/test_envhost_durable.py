"""Durable sessions (`SessionOptions.durable`, issue 29 "no silent tail loss"): each step is
answered only once its step event is stored in JetStream, so an env host killed right after an
answer loses none of the steps its clients were answered for. By default the events of ~50 ms
are gathered first, and a `kill -9` lost them."""

from __future__ import annotations

import signal
from typing import Any

from envhost_testkit import EnvHostProcess, new_session_id, recorded_events, stop_session, stored_step_messages
from step_path_kit import reset, start, step


async def test_every_answer_of_a_durable_session_comes_after_its_event_is_stored(
        envhost: EnvHostProcess, nats_client: Any, js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True, durable=True)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=0))
    for i in range(1, 6):
        assert (await link.request(step(i % 2))).WhichOneof("result") == "step"
        # stored already when the answer came: the reset's message and one per step
        assert await stored_step_messages(js, session_id) == i + 1
    stored = await recorded_events(js, session_id, 6)
    assert [event.seq for event in stored] == list(range(1, 7))
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_kill_9_right_after_the_answers_loses_no_answered_step(
        nats_server: Any, nats_client: Any, js: Any, open_link: Any) -> None:
    host = EnvHostProcess(nats_server.url).start()
    try:
        session_id = new_session_id()
        await start(nats_client, host.host_id, session_id, record=True, durable=True)
        link = await open_link(host.step_address, session_id)
        await link.request(reset(seed=0))
        for i in range(20):
            await link.request(step(i % 2))
        host.process.send_signal(signal.SIGKILL)
        host.process.wait(timeout=10)
        stored = await recorded_events(js, session_id, 21, timeout=5)
        assert [event.seq for event in stored] == list(range(1, 22)), "the reset and all 20 answered steps"
    finally:
        host.cleanup()


async def test_a_plain_recorded_session_is_not_durable(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                       open_link: Any) -> None:
    """The default gathers events: right after an answer its event is not stored yet."""
    session_id = new_session_id()
    await start(nats_client, envhost.host_id, session_id, record=True)
    link = await open_link(envhost.step_address, session_id)
    await link.request(reset(seed=0))
    await link.request(step(0))
    assert await stored_step_messages(js, session_id) == 0
    await stop_session(nats_client, envhost.host_id, session_id)
