"""NATS request/reply API of the comparison store (JSON bodies, like the recordings API).

    platform.recorder.comparisons.save  {"document": {...}} -> {"comparison": stored document}
        (the store assigns "id", "cmp-" + 12 hex digits, and "created", ISO 8601 UTC)
    platform.recorder.comparisons.list  {} -> {"comparisons": [summary]} newest first, summary =
        {"id", "created", "env", "agents": [names], "steps", "window"}
    platform.recorder.comparisons.get   {"id"} -> {"comparison": document}
Errors answer {"error": {"code", "message"}}: "invalid_argument" (a body that is not JSON, a
document the store does not take, one larger than MAX_COMPARISON_BYTES), "not_found", "internal".
Queue group `recorder`: replicas sharing the recordings storage share the requests.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from nats.aio.msg import Msg
from opentelemetry import trace
from platform_contracts import subjects
from platform_contracts.limits import MAX_COMPARISON_BYTES
from platform_contracts.tracing import extract_dict
from platform_recorder.comparisons.comparison_store import (
    ComparisonStore,
    ComparisonTooLargeError,
    InvalidComparisonError,
    too_large_message,
)
from platform_recorder.errors import RecorderError

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_recorder")

QUEUE = "recorder"
# A save request may hold some whitespace more than the compact document it stores.
_MAX_REQUEST_BYTES = 2 * MAX_COMPARISON_BYTES


def _parse(data: bytes) -> dict[str, Any]:
    if len(data) > _MAX_REQUEST_BYTES:
        raise ComparisonTooLargeError(too_large_message(len(data)))
    if not data.strip():
        return {}
    try:
        body = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidComparisonError(f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidComparisonError("the request body must be a JSON object")
    return body


class ComparisonsApi:
    """Serves the comparison subjects from a ComparisonStore."""

    def __init__(self, nc: Any, store: ComparisonStore) -> None:
        self.nc = nc
        self.store = store
        self._subs: list[Any] = []

    async def start(self) -> None:
        handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            subjects.RECORDER_SAVE_COMPARISON: self._save,
            subjects.RECORDER_LIST_COMPARISONS: self._list,
            subjects.RECORDER_GET_COMPARISON: self._get,
        }
        for subject, work in handlers.items():
            async def on_request(msg: Msg, work: Callable[[dict[str, Any]], dict[str, Any]] = work) -> None:
                await self._serve(msg, work)

            self._subs.append(await self.nc.subscribe(subject, queue=QUEUE, cb=on_request))
        await self.nc.flush()  # the server knows the subscriptions before the recorder says it is ready

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    def _save(self, body: dict[str, Any]) -> dict[str, Any]:
        if "document" not in body:
            raise InvalidComparisonError("'document' is required: the comparison to store")
        return {"comparison": self.store.save(body["document"])}

    def _list(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"comparisons": self.store.list_summaries()}

    def _get(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"comparison": self.store.get(body.get("id"))}

    async def _serve(self, msg: Msg, work: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        ctx = extract_dict(msg.headers)
        traced = trace.get_current_span(ctx).get_span_context().is_valid
        name = "recorder." + msg.subject.removeprefix("platform.recorder.")
        try:
            if traced:
                with tracer.start_as_current_span(name, context=ctx, kind=trace.SpanKind.SERVER):
                    data = await self._answer(msg, work)
            else:
                data = await self._answer(msg, work)
            if msg.reply:
                await self.nc.publish(msg.reply, data)
        except Exception:  # the connection went away: nothing to answer on
            log.exception("cannot answer %s", msg.subject)

    @staticmethod
    async def _answer(msg: Msg, work: Callable[[dict[str, Any]], dict[str, Any]]) -> bytes:
        try:
            reply = await asyncio.to_thread(lambda: work(_parse(msg.data)))
            return json.dumps(reply, separators=(",", ":")).encode()
        except RecorderError as exc:
            return json.dumps({"error": {"code": exc.code, "message": str(exc)}}).encode()
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            return json.dumps({"error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}}).encode()
