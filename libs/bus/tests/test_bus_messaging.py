"""`platform_bus.request`/`publish`/`publish_to_stream` on a real nats-server: the trace context
goes in the headers, and every kind of "no answer" is one `BusUnavailableError`."""

from __future__ import annotations

import asyncio

import nats
import pytest
from opentelemetry import trace
from platform_bus import BusUnavailableError, connect, publish, publish_to_stream, request
from platform_contracts.tracing import setup_tracing

tracer = setup_tracing("bus-tests")


def trace_id_of(headers: dict[str, str] | None) -> str:
    """The trace id of a `traceparent` header (version-traceid-spanid-flags)."""
    return (headers or {}).get("traceparent", "").split("-")[1]


def current_trace_id() -> str:
    return format(trace.get_current_span().get_span_context().trace_id, "032x")


@pytest.fixture
async def nc(nats_server):
    client = await connect(nats_server.url, name="bus-tests")
    yield client
    await client.close()


async def test_a_request_carries_the_callers_trace(nc, unique_prefix) -> None:
    subject = f"{unique_prefix}.echo"

    async def echo(msg) -> None:
        await msg.respond(msg.headers.get("traceparent", "").encode())

    await nc.subscribe(subject, cb=echo)
    with tracer.start_as_current_span("caller"):
        caller = current_trace_id()
        reply = await request(nc, subject, b"", timeout=5, service="echo", headers={"x-extra": "1"})
    assert reply.data.decode().split("-")[1] == caller


async def test_a_request_without_a_caller_span_is_traced_too(nc, unique_prefix) -> None:
    subject = f"{unique_prefix}.echo"
    seen: list[dict[str, str]] = []

    async def echo(msg) -> None:
        seen.append(dict(msg.headers or {}))
        await msg.respond(b"ok")

    await nc.subscribe(subject, cb=echo)
    await request(nc, subject, b"", timeout=5, service="echo", headers={"x-extra": "1"})
    assert len(trace_id_of(seen[0])) == 32 and seen[0]["x-extra"] == "1"


async def test_nobody_listening_is_unavailable_naming_service_and_subject(nc, unique_prefix) -> None:
    subject = f"{unique_prefix}.nobody"
    with pytest.raises(BusUnavailableError) as caught:
        await request(nc, subject, b"", timeout=5, service="broker")
    assert caught.value.reason == "no_responders" and caught.value.subject == subject
    assert str(caught.value) == f"broker unavailable: nothing answers {subject}"


async def test_a_late_answer_is_unavailable_with_the_timeout(nc, unique_prefix) -> None:
    subject = f"{unique_prefix}.silent"
    await nc.subscribe(subject)  # takes requests, never answers
    with pytest.raises(BusUnavailableError) as caught:
        await request(nc, subject, b"", timeout=0.2, service="recorder")
    assert caught.value.reason == "timeout"
    assert str(caught.value) == f"recorder unavailable: no answer on {subject} within 0.2 s"


async def test_a_closed_connection_is_unavailable_at_once(nats_server, unique_prefix) -> None:
    client = await connect(nats_server.url, name="bus-tests")
    await client.close()
    with pytest.raises(BusUnavailableError, match=r"^env host 'h1' unavailable: NATS is unreachable") as caught:
        await request(client, f"{unique_prefix}.x", b"", timeout=5, service="env host 'h1'")
    assert caught.value.reason == "unreachable"
    with pytest.raises(BusUnavailableError) as published:
        await publish(client, f"{unique_prefix}.x", b"")
    assert published.value.reason == "unreachable"


async def test_a_plain_asyncio_timeout_is_the_same_error(unique_prefix) -> None:
    class LateClient:  # what asyncio.wait_for inside a client raises when it gives up
        is_connected = True

        async def request(self, *args, **kwargs):
            raise asyncio.TimeoutError

    with pytest.raises(BusUnavailableError) as caught:
        await request(LateClient(), f"{unique_prefix}.x", b"", timeout=1, service="broker")
    assert caught.value.reason == "timeout"


async def test_a_publish_carries_the_trace(nc, unique_prefix) -> None:
    subject = f"{unique_prefix}.beat"
    sub = await nc.subscribe(subject)
    with tracer.start_as_current_span("caller"):
        caller = current_trace_id()
        await publish(nc, subject, b"beat")
    msg = await sub.next_msg(timeout=5)
    assert msg.data == b"beat" and trace_id_of(msg.headers) == caller
    await publish(nc, subject, b"alone")  # no caller span: the publish's own
    assert len(trace_id_of((await sub.next_msg(timeout=5)).headers)) == 32


async def test_a_stream_publish_keeps_its_headers_and_adds_the_trace(nc, unique_prefix) -> None:
    js = nc.jetstream()
    stream = f"{unique_prefix}_S"
    await js.add_stream(name=stream, subjects=[f"{unique_prefix}.events"])
    try:
        with tracer.start_as_current_span("caller"):
            caller = current_trace_id()
            ack = await publish_to_stream(js, f"{unique_prefix}.events", b"e", timeout=5,
                                          headers={"Nats-Msg-Id": "one"})
        again = await publish_to_stream(js, f"{unique_prefix}.events", b"e", timeout=5,
                                        headers={"Nats-Msg-Id": "one"})
        assert again.duplicate and again.seq == ack.seq
        stored = await js.get_msg(stream, ack.seq)
        assert trace_id_of(stored.headers) == caller
    finally:
        await js.delete_stream(stream)


async def test_a_stream_publish_without_a_stream_is_unavailable(nc, unique_prefix) -> None:
    with pytest.raises(BusUnavailableError) as caught:
        await publish_to_stream(nc.jetstream(), f"{unique_prefix}.nowhere", b"e", timeout=2)
    assert caught.value.reason == "no_responders"
    assert str(caught.value) == f"JetStream unavailable: no stream takes {unique_prefix}.nowhere"


def test_nats_py_timeouts_are_builtin_timeouts() -> None:
    """`request` catches the builtin TimeoutError: it must cover the client's own class."""
    assert issubclass(nats.errors.TimeoutError, TimeoutError)
    assert asyncio.TimeoutError is TimeoutError
