"""The gateway's spans of the session stream's commands.

An SDK's binary request is forwarded as it came, unparsed; one whose bytes hold a `traceparent`
(one substring test per request: only a traced SDK's do) is parsed, and forwarded inside a span
`gateway.<command>`, a child of the SDK's, whose context is appended to the request (protobuf
merges it over the SDK's), so the env host's span is the gateway's child (`traced_forward`).

The trace of one command of a web page (its JSON text commands, and the Session page's binary
steps, `page_forward`):

The stream's connection has one span for its whole life (`tracing_middleware`); a command run in
it would put every step of the page into that one trace. Each command is instead a trace of its
own, `gateway.<op>`, linked to the connection's span, for the share of commands the sampler asks
for (`OTEL_TRACES_SAMPLER`: `platform_contracts.trace_setup`, as the env host's for untraced
steps); the others carry no trace context at all (so the env host decides as for any untraced
step). With sampling off (the default) a command costs one test of a float more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager

from google.protobuf.message import DecodeError
from opentelemetry import context, trace
from opentelemetry.context import Context
from platform_contracts import trace_setup
from platform_contracts.tracing import extract_dict, inject_dict
from simulusion.env.v1 import environment_pb2 as env_pb

_tracer = trace.get_tracer("platform_gateway")
TRACEPARENT = b"traceparent"


async def traced_forward(session_id: str, data: bytes, exchange: Callable[[str, bytes], Awaitable[bytes]]) -> bytes:
    """`exchange(session_id, data)`, inside a span of the gateway when `data` (a binary request,
    whose bytes hold `traceparent`) carries a valid trace context (see the module)."""
    try:
        request = env_pb.EnvRequest.FromString(data)
    except DecodeError:
        return await exchange(session_id, data)  # the env host answers what is wrong with it
    ctx = extract_dict(request.trace_context)
    if not trace.get_current_span(ctx).get_span_context().is_valid:
        return await exchange(session_id, data)
    command = request.WhichOneof("command") or ""
    with _tracer.start_as_current_span(f"gateway.{command}", context=ctx, kind=trace.SpanKind.SERVER,
                                       attributes={"session.id": session_id}):
        appended = env_pb.EnvRequest(trace_context=inject_dict()).SerializeToString()
        return await exchange(session_id, data + appended)


async def page_forward(session_id: str, data: bytes, exchange: Callable[[str, bytes], Awaitable[bytes]]) -> bytes:
    """`exchange(session_id, data)` for a web page's binary request (an untraced one: the page
    sends no trace context): in a trace of its own, `gateway.<command>`, whose context is appended
    to the request, for the share of requests the sampler asks for, as the page's JSON commands."""
    setup = trace_setup.current()
    if setup is None or not setup.sample_step_root():
        return await exchange(session_id, data)
    try:
        command = env_pb.EnvRequest.FromString(data).WhichOneof("command") or ""
    except DecodeError:
        return await exchange(session_id, data)  # the env host answers what is wrong with it
    with _root_span(setup, session_id, command):
        appended = env_pb.EnvRequest(trace_context=inject_dict()).SerializeToString()
        return await exchange(session_id, data + appended)


@contextmanager
def command_span(session_id: str, op: str) -> Iterator[None]:
    """Run a stream command in a trace of its own, or in no trace."""
    setup = trace_setup.current()
    if setup is not None and setup.sample_step_root():
        with _root_span(setup, session_id, op):
            yield
        return
    token = context.attach(Context())  # not the connection's trace
    try:
        yield
    finally:
        context.detach(token)


@contextmanager
def _root_span(setup: trace_setup.TracingSetup, session_id: str, op: str) -> Iterator[None]:
    """A span `gateway.<op>` beginning a trace, linked to the connection's span."""
    connection = trace.get_current_span().get_span_context()
    with setup.step_root_tracer.start_as_current_span(
            f"gateway.{op}", context=Context(), kind=trace.SpanKind.SERVER,
            links=[trace.Link(connection)] if connection.is_valid else None,
            attributes={"session.id": session_id}):
        yield
