"""NATS request/reply API of the comparison store (protobuf messages of simulusion.recorder.v1,
like the recordings API).

    platform.recorder.comparisons.save  SaveComparisonRequest (the document as JSON text) ->
        ComparisonReply: the stored document (the store assigns "id", "cmp-" + 12 hex digits, and
        "created", ISO 8601 UTC)
    platform.recorder.comparisons.list  ListComparisonsRequest -> ListComparisonsReply: a
        ComparisonSummary (id, created, env, the agents' names, steps, window, team) per
        comparison, newest first
    platform.recorder.comparisons.get   GetComparisonRequest -> ComparisonReply
Errors fill the reply's `error`: "invalid_argument" (a request that does not parse, a document
that is not JSON or that the store does not take, one larger than MAX_COMPARISON_BYTES),
"not_found", "internal". Queue group `recorder`: replicas sharing the recordings storage share
the requests.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import DecodeError, Message
from nats.aio.msg import Msg
from opentelemetry import trace
from platform_bus import flush_queued
from platform_contracts import subjects
from platform_contracts.limits import MAX_COMPARISON_BYTES
from platform_contracts.recorder_json import dumps, message_from_json
from platform_contracts.tracing import extract_dict
from platform_recorder.comparisons.comparison_store import (
    ComparisonStore,
    ComparisonTooLargeError,
    InvalidComparisonError,
    too_large_message,
)
from platform_recorder.errors import RecorderError
from simulusion.control.v1.control_pb2 import ControlError
from simulusion.recorder.v1 import recorder_pb2 as rec

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_recorder")

QUEUE = "recorder"
# A save request may hold some whitespace more than the compact document it stores.
_MAX_REQUEST_BYTES = 2 * MAX_COMPARISON_BYTES


def _parse(data: bytes, request_type: type[Any]) -> Any:
    if len(data) > _MAX_REQUEST_BYTES:
        raise ComparisonTooLargeError(too_large_message(len(data)))
    try:
        return request_type.FromString(data)
    except DecodeError as exc:
        raise InvalidComparisonError(f"the request is not a {request_type.DESCRIPTOR.full_name}: {exc}") from None


class ComparisonsApi:
    """Serves the comparison subjects from a ComparisonStore."""

    def __init__(self, nc: Any, store: ComparisonStore) -> None:
        self.nc = nc
        self.store = store
        self._subs: list[Any] = []

    async def start(self) -> None:
        handlers: dict[str, tuple[type[Any], type[Any], Callable[[Any], Message]]] = {
            subjects.RECORDER_SAVE_COMPARISON: (rec.SaveComparisonRequest, rec.ComparisonReply, self._save),
            subjects.RECORDER_LIST_COMPARISONS: (rec.ListComparisonsRequest, rec.ListComparisonsReply, self._list),
            subjects.RECORDER_GET_COMPARISON: (rec.GetComparisonRequest, rec.ComparisonReply, self._get),
        }
        for subject, (request_type, reply_type, work) in handlers.items():
            self._subs.append(await self.nc.subscribe(
                subject, queue=QUEUE, cb=self._handler(request_type, reply_type, work)))
        await flush_queued(self.nc)  # the server knows the subscriptions before the recorder says it is ready

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    def _save(self, request: rec.SaveComparisonRequest) -> rec.ComparisonReply:
        if not request.document_json:
            raise InvalidComparisonError("'document' is required: the comparison to store")
        try:
            document = json.loads(request.document_json)
        except ValueError as exc:
            raise InvalidComparisonError(f"the document is not JSON: {exc}") from None
        return rec.ComparisonReply(comparison_json=dumps(self.store.save(document)))

    def _list(self, request: rec.ListComparisonsRequest) -> rec.ListComparisonsReply:
        found = [message_from_json(s, rec.ComparisonSummary()) for s in self.store.list_summaries()]
        return rec.ListComparisonsReply(comparisons=found)

    def _get(self, request: rec.GetComparisonRequest) -> rec.ComparisonReply:
        return rec.ComparisonReply(comparison_json=dumps(self.store.get(request.id)))

    def _handler(
        self, request_type: type[Any], reply_type: type[Any], work: Callable[[Any], Message]
    ) -> Callable[[Msg], Awaitable[None]]:
        async def on_request(msg: Msg) -> None:
            await self._serve(msg, request_type, reply_type, work)

        return on_request

    async def _serve(
        self, msg: Msg, request_type: type[Any], reply_type: type[Any], work: Callable[[Any], Message]
    ) -> None:
        ctx = extract_dict(msg.headers)
        traced = trace.get_current_span(ctx).get_span_context().is_valid
        name = "recorder." + msg.subject.removeprefix("platform.recorder.")
        try:
            if traced:
                with tracer.start_as_current_span(name, context=ctx, kind=trace.SpanKind.SERVER):
                    data = await self._answer(msg, request_type, reply_type, work)
            else:
                data = await self._answer(msg, request_type, reply_type, work)
            if msg.reply:
                await self.nc.publish(msg.reply, data)
        except Exception:  # the connection went away: nothing to answer on
            log.exception("cannot answer %s", msg.subject)

    @staticmethod
    async def _answer(
        msg: Msg, request_type: type[Any], reply_type: type[Any], work: Callable[[Any], Message]
    ) -> bytes:
        try:
            reply = await asyncio.to_thread(lambda: work(_parse(msg.data, request_type)))
            return reply.SerializeToString()
        except RecorderError as exc:
            error = ControlError(code=exc.code, message=str(exc))
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            error = ControlError(code="internal", message=f"{type(exc).__name__}: {exc}")
        return bytes(reply_type(error=error).SerializeToString())
