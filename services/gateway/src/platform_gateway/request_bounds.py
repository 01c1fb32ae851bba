"""Request bodies have bounds: each route's limit (`platform_contracts.limits`), enforced
before the body is read, and stated in the OpenAPI document.

`RequestBounds` is a pure ASGI middleware. Per HTTP request it scans the request's headers
once, up to `Content-Length`, and looks the route's limit up by path (`body_limit`) only when
the length has as many digits as the smallest limit (a step's body never does):

- a declared `Content-Length` over the limit is answered 413 at once, the body unread (the
  client may still send it: uvicorn's parser drops it; the transport's body timeouts,
  `platform_gateway.transport_bounds`, still apply);
- a declared `Content-Length` within it needs nothing more (the HTTP parser never hands the
  app more bytes than declared), so the request goes on with its own `receive`;
- a chunked body (no length) is counted as it arrives and answered 413 as soon as it passes.

Every answer is the gateway's error shape (`{"detail", "code"}`, code "too_large"), naming the
limit. Bodies that arrive too slowly are cut by the transport (408), not here.
"""

from __future__ import annotations

import json
from typing import Any

from platform_contracts import limits
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_BY_PATH: dict[str, int] = {
    "/v0/sessions": limits.MAX_SESSION_CREATE_BODY_BYTES,
    "/v0/comparisons": limits.MAX_COMPARISON_BODY_BYTES,
    "/v0/doom/wads": limits.MAX_WAD_BYTES,
    "/v0/experiments": limits.MAX_EXPERIMENT_BODY_BYTES,
    "/v0/runs": limits.MAX_RUN_BODY_BYTES,
}
_SESSIONS = "/v0/sessions/"
_COMMANDS = ("/reset", "/step", "/hold")  # under /v0/sessions/{session_id}
_RUNS = "/v0/runs/"  # a run's change, and its metric points (`/v0/runs/{run_id}/metrics`)
_BODY_METHODS = ("post", "put", "patch")
# A Content-Length of fewer digits is below every limit.
_FITS_DIGITS = len(str(min(limits.MAX_DEFAULT_BODY_BYTES, limits.MAX_COMMAND_BODY_BYTES,
                           limits.MAX_SESSION_CREATE_BODY_BYTES, limits.MAX_COMPARISON_BODY_BYTES,
                           limits.MAX_WAD_BYTES)))


def body_limit(path: str) -> int:
    """The most bytes a request body to `path` may have (a concrete path or the OpenAPI
    document's template: `/v0/sessions/{session_id}/step` and `/v0/sessions/s-1/step` alike)."""
    limit = _BY_PATH.get(path)
    if limit is not None:
        return limit
    if path.startswith(_SESSIONS) and path.endswith(_COMMANDS):
        return limits.MAX_COMMAND_BODY_BYTES
    if path.startswith(_RUNS):
        return limits.MAX_RUN_METRICS_BODY_BYTES if path.endswith("/metrics") else limits.MAX_RUN_BODY_BYTES
    return limits.MAX_DEFAULT_BODY_BYTES


def in_words(size: int) -> str:
    """`size` bytes for a message: "2097152 bytes (2 MiB)", "65536 bytes (64 KiB)"."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size} bytes ({size // scale} {unit})"
    return f"{size} bytes"


def too_large_message(method: str, path: str, limit: int, size: int | None) -> str:
    got = f"{size} bytes, over" if size is not None else "over"
    return f"the request body is {got} {in_words(limit)}, the most {method} {path} takes (platform_contracts.limits)"


class RequestBounds:
    """The body limit of every HTTP request (see the module's docstring); WebSockets pass."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"content-length":
                    # Under _FITS_DIGITS digits a length is below every limit: no lookup (a step's body).
                    if len(value) >= _FITS_DIGITS and value.isdigit():
                        limit = body_limit(scope["path"])
                        if int(value) > limit:
                            await _answer_too_large(
                                send, too_large_message(scope["method"], scope["path"], limit, int(value)))
                            return
                    break  # the parser refuses a request with both a length and chunks
                if name == b"transfer-encoding":
                    await self._counted(scope, receive, send, body_limit(scope["path"]))
                    return
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:  # the client went, or the transport cut a late body: no answer to give
            pass

    async def _counted(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """A body without a declared length: counted as it arrives; past `limit`, answered 413
        (when no answer has started) and the app is told the client left."""
        received = 0
        started = answered = False

        async def counted_receive() -> Message:
            nonlocal received, answered
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    if not started and not answered:
                        answered = True
                        await _answer_too_large(send, too_large_message(scope["method"], scope["path"], limit, None))
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if answered:
                return  # the 413 went first
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except ClientDisconnect:
            pass


async def _answer_too_large(send: Send, detail: str) -> None:
    body = json.dumps({"detail": detail, "code": "too_large"}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def describe(document: dict[str, Any]) -> dict[str, Any]:
    """State each body's limit in an OpenAPI document (in place; returned): every operation
    that takes a body gets `x-body-limit-bytes` and a 413 answer naming the limit, and a 408
    for a body that arrives too slowly (platform_gateway.transport_bounds)."""
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorPublic"}}}
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in _BODY_METHODS or "requestBody" not in operation:
                continue
            limit = body_limit(path)
            operation["x-body-limit-bytes"] = limit
            responses = operation.setdefault("responses", {})
            responses["413"] = {
                "description": f"the body is over this route's limit, {in_words(limit)} (declared or sent)",
                "content": error}
            responses.setdefault("408", {
                "description": "the body came too slowly (no byte for PLATFORM_BODY_TIMEOUT seconds, or under "
                               "PLATFORM_MIN_UPLOAD_RATE bytes/s on average after PLATFORM_UPLOAD_GRACE seconds)",
                "content": error})
    return document
