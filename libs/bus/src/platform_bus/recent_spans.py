"""A session's recent spans from every service, over the bus: a scatter-gather.

Every service answers `platform.traces.recent` (no queue group, so every replica does) from its
own in-memory buffer (`platform_contracts.recent_spans`), with what `answer_recent_spans`'
`extra` adds (the env host: its instances' spans). The gateway publishes one request and takes
every answer that comes within a window (`gather_recent_spans`): there is no list of who should
answer, and a service that is down is simply absent from the trace.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from platform_contracts import subjects, trace_setup
from simulusion.traces.v1 import traces_pb2

from platform_bus.messaging import trace_headers

log = logging.getLogger(__name__)

GATHER_WINDOW_S = 1.0  # how long the gateway waits for the services' answers
MAX_SPANS_PER_ANSWER = 5000  # an answer stays well under the bus's max payload

# The env host's addition: (session id, the hex ids of the session's traces it saw) -> spans.
ExtraSpans = Callable[[str, set[str]], list[traces_pb2.Span]]


def recent_session_spans(session_id: str, max_traces: int, extra: ExtraSpans | None = None) -> traces_pb2.RecentSpansReply:
    """This process's answer: its spans of `session_id`'s newest `max_traces` traces."""
    setup = trace_setup.current()
    if setup is None or setup.recent is None:
        return traces_pb2.RecentSpansReply()
    spans, trace_ids = setup.recent.session_spans(session_id, max_traces)
    if extra is not None and trace_ids:
        spans += extra(session_id, {format(trace_id, "032x") for trace_id in trace_ids})
    return traces_pb2.RecentSpansReply(service=setup.service_name, spans=spans[-MAX_SPANS_PER_ANSWER:])


async def answer_recent_spans(nc: Any, extra: ExtraSpans | None = None) -> Any:
    """Answer `platform.traces.recent` from this process's buffer; returns the subscription."""

    async def handle(msg: Any) -> None:
        try:
            request = traces_pb2.RecentSpansRequest.FromString(msg.data)
            reply = recent_session_spans(request.session_id, request.max_traces or 20, extra)
            await msg.respond(reply.SerializeToString())
        except Exception as exc:  # noqa: BLE001 - a bad request or a closed connection: no answer
            log.debug("no answer to a recent spans request: %s", exc)

    return await nc.subscribe(subjects.TRACES_RECENT, cb=handle)


async def gather_recent_spans(nc: Any, session_id: str, max_traces: int,
                              window: float = GATHER_WINDOW_S) -> list[traces_pb2.RecentSpansReply]:
    """Every answer to one `platform.traces.recent` request that comes within `window` seconds."""
    answers: list[traces_pb2.RecentSpansReply] = []

    async def keep(msg: Any) -> None:
        try:
            answers.append(traces_pb2.RecentSpansReply.FromString(msg.data))
        except Exception as exc:  # noqa: BLE001 - one bad answer leaves the others
            log.debug("a recent spans answer could not be read: %s", exc)

    inbox = nc.new_inbox()
    subscription = await nc.subscribe(inbox, cb=keep)
    try:
        request = traces_pb2.RecentSpansRequest(session_id=session_id, max_traces=max_traces)
        await nc.publish(subjects.TRACES_RECENT, request.SerializeToString(), reply=inbox, headers=trace_headers())
        await asyncio.sleep(window)
    finally:
        await subscription.unsubscribe()
    return answers
