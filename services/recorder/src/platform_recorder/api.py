"""NATS request/reply API (JSON bodies): list recordings and get one recording's meta.json.

    platform.recorder.recordings.list  {"env_id"?, "session_id"?} -> {"recordings": [meta, ...]}
    platform.recorder.recordings.get   {"id"} -> {"recording": meta}
Errors answer {"error": {"code": "not_found" | "invalid_argument" | "internal", "message": ...}}.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from nats.aio.msg import Msg
from opentelemetry import trace
from platform_contracts import subjects
from platform_contracts.tracing import extract_dict

from platform_recorder.errors import RecorderError
from platform_recorder.meta import jsonable
from platform_recorder.reading import list_recordings, read_meta

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_recorder")

QUEUE = "recorder"


class InvalidRequestError(RecorderError):
    code = "invalid_argument"


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidRequestError(f"{key!r} must be a string, got {type(value).__name__}")
    return value or None


def _parse(data: bytes) -> dict[str, Any]:
    if not data.strip():
        return {}
    try:
        body = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidRequestError(f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidRequestError("the request body must be a JSON object")
    return body


class RecordingsApi:
    """Serves the recorder's request/reply subjects from the recordings folder."""

    def __init__(self, nc: Any, root: Path) -> None:
        self.nc = nc
        self.root = Path(root)
        self._subs: list[Any] = []

    async def start(self) -> None:
        self._subs = [
            await self.nc.subscribe(subjects.RECORDER_LIST_RECORDINGS, queue=QUEUE, cb=self._on_list),
            await self.nc.subscribe(subjects.RECORDER_GET_RECORDING, queue=QUEUE, cb=self._on_get),
        ]

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    async def _on_list(self, msg: Msg) -> None:
        def work(body: dict[str, Any]) -> dict[str, Any]:
            recordings = list_recordings(
                self.root, env_id=_optional_str(body, "env_id"), session_id=_optional_str(body, "session_id")
            )
            return {"recordings": recordings}

        await self._serve(msg, "recorder.recordings.list", work)

    async def _on_get(self, msg: Msg) -> None:
        def work(body: dict[str, Any]) -> dict[str, Any]:
            recording_id = _optional_str(body, "id")
            if recording_id is None:
                raise InvalidRequestError("'id' is required")
            return {"recording": read_meta(self.root, recording_id)}

        await self._serve(msg, "recorder.recordings.get", work)

    async def _serve(self, msg: Msg, name: str, work: Any) -> None:
        ctx = extract_dict(msg.headers)
        traced = trace.get_current_span(ctx).get_span_context().is_valid
        span = tracer.start_as_current_span(name, context=ctx, kind=trace.SpanKind.SERVER) if traced else None
        try:
            if span is not None:
                with span:
                    reply = await self._answer(msg, work)
            else:
                reply = await self._answer(msg, work)
            await msg.respond(json.dumps(jsonable(reply)).encode())
        except Exception:  # the connection went away: nothing to answer on
            log.exception("cannot answer %s", msg.subject)

    @staticmethod
    async def _answer(msg: Msg, work: Any) -> dict[str, Any]:
        try:
            return await asyncio.to_thread(work, _parse(msg.data))
        except RecorderError as exc:
            return {"error": {"code": exc.code, "message": str(exc)}}
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            return {"error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}}
