"""`/v0/sessions/{id}/stream`: the SDK's fast path, and JSON commands for browsers.

A BINARY message is a serialized `EnvRequest`: its bytes go unparsed to the session's gRPC
stream (or step link) and the response's bytes come back as one binary message.

A TEXT message is a JSON command (`schemas.stream.StreamCommand`, e.g. `{"id": 1, "op": "step",
"action": 0, "frame": true, "observation": "digest"}`; ops reset, step, hold, snapshot, restore,
save_snapshot, restore_saved, render), answered with one text message `{"id", "op", "result"}`
or `{"id", "op", "error": {"status", "detail", "code", "field"?, "log_tail"?}}`
(`schemas.stream.StreamAnswer`). When the answer's `result.frame` is set (`"frame": true` on
reset, step, restore and restore_saved; always for render) exactly one BINARY message follows
it: that frame's JPEG bytes (`result.frame.size` of them). `"observation"` says how the answer
carries the observation: "full" (JSON, the default), "digest" (its hex SHA-256,
platform_contracts.digests) or "none". A malformed command is a 422 error naming the `field`.

A session the web app opened for one page (`closes_with_page`) counts its open streams here:
`platform_gateway.page_sessions` closes it a while after the last one closes.

Close codes: 4401 bad token (when the server cannot answer HTTP 401), 4403 signed in but not
a member of any team (managed; HTTP 403 when it can), 4404 unknown
session, 4410 closed or crashed session (after sending the response that says so), 1013
the broker or the env host cannot be reached, 1011 other failures.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_gateway import wire
from platform_gateway.command_spans import TRACEPARENT, command_span, page_forward, traced_forward
from platform_gateway.identity.authenticator import Authenticator
from platform_gateway.api.errors import error_body
from platform_gateway.errors import (
    GatewayError,
    NotFoundError,
    PermissionDeniedError,
    SessionGoneError,
    SessionNotFoundError,
    UnauthenticatedError,
    UnavailableError,
)
from platform_gateway.gateway import Gateway
from platform_gateway.json_ops import message_head, parse_command, run_command
from platform_gateway.metrics import BROWSER_PATH, GATEWAY_PATH
from platform_gateway.stream_json import answer_text
from platform_gateway.schemas.stream import openapi_components

router = APIRouter(tags=["sessions"])
_UNAVAILABLE = env_pb.ERROR_CODE_UNAVAILABLE


def close_code(exc: GatewayError) -> int:
    if isinstance(exc, NotFoundError):
        return 4404
    if isinstance(exc, SessionGoneError):
        return 4410
    if isinstance(exc, UnavailableError):
        return 1013
    return 1011


def close_reason(message: str, limit: int = 120) -> str:
    """`message` cut to at most `limit` UTF-8 bytes (a close frame holds 123)."""
    data = message.encode()
    if len(data) <= limit:
        return message
    return data[: limit - 3].decode(errors="ignore") + "..."


@router.websocket("/sessions/{session_id}/stream")
async def session_stream(websocket: WebSocket, session_id: str) -> None:
    """Commands of one session over one WebSocket (see the module's docstring)."""
    gateway: Gateway = websocket.app.state.gateway
    if not await _authorized(websocket, gateway.identity):
        return
    await websocket.accept()
    streams = gateway.streams
    try:
        identity = getattr(websocket.state, "identity", None) or await gateway.identity.identify(None)
        await gateway.access.require("session_id", session_id, identity)  # another team's: as missing
        info = await streams.directory.running(session_id)
    except GatewayError as exc:
        await websocket.close(close_code(exc), close_reason(exc.message))
        return
    gateway.pages.opened(info)  # a page's session closes a while after its last stream (page_sessions)
    try:
        await _serve(websocket, gateway, session_id)
    except (WebSocketDisconnect, OSError):  # the client went away mid-answer
        return
    finally:
        gateway.pages.closed(session_id)


async def _serve(websocket: WebSocket, gateway: Gateway, session_id: str) -> None:
    streams = gateway.streams
    receive, send, exchange = websocket.receive, websocket.send, streams.exchange
    from_page = "origin" in websocket.headers  # every browser sends it on a WebSocket handshake; the SDK does not
    metrics = gateway.metrics
    took, path = metrics.stream_seconds.took, BROWSER_PATH if from_page else GATEWAY_PATH
    clock = time.perf_counter
    while True:
        message = await receive()
        data = message.get("bytes")
        if data is not None:
            started = clock()
            try:
                if TRACEPARENT in data:  # a traced SDK's request: the gateway's span (command_spans)
                    response = await traced_forward(session_id, data, exchange)
                elif from_page:  # the Session page's steps: traced as its JSON commands are
                    response = await page_forward(session_id, data, exchange)
                else:
                    response = await exchange(session_id, data)
            except GatewayError as exc:
                await _fail_binary(websocket, data, exc)
                return
            await send({"type": "websocket.send", "bytes": response})
            took(path, clock() - started)
            if wire.error_code(response) == _UNAVAILABLE:
                streams.forget(session_id)
                error = env_pb.EnvResponse.FromString(response).error
                reason = error.message or f"session {session_id}: the environment instance died"
                await websocket.close(4410, close_reason(reason))
                return
            continue
        text = message.get("text")
        if text is None:  # websocket.disconnect
            return
        if not await _text_command(websocket, gateway, session_id, text):
            return


async def _authorized(websocket: WebSocket, authenticator: Authenticator) -> bool:
    if not authenticator.required:  # the open platform's identity, for routes that check access by it
        websocket.state.identity = await authenticator.identify(None)
        return True
    token = websocket.query_params.get("token")
    header = websocket.headers.get("authorization", "")
    if token is None and header.lower().startswith("bearer "):
        token = header[7:].strip()
    try:
        websocket.state.identity = await authenticator.identify(token)
        return True
    except UnauthenticatedError as exc:
        detail, status, code = exc.message, 401, 4401
        if token is None:
            detail += " (or `?token=<token>`)"
    except PermissionDeniedError as exc:  # signed in, but not a member of any team (managed)
        detail, status, code = exc.message, 403, 4403
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        body = {"detail": detail, "code": "unauthenticated" if status == 401 else "permission_denied"}
        await websocket.send_denial_response(JSONResponse(body, status))
    else:
        await websocket.accept()
        await websocket.close(code, close_reason(detail))
    return False


async def _fail_binary(websocket: WebSocket, request: bytes, exc: GatewayError) -> None:
    """Answer the request with an error response when the session is gone, then close."""
    if isinstance(exc, SessionGoneError):
        try:
            request_id = env_pb.EnvRequest.FromString(request).id
        except Exception:  # noqa: BLE001 - a malformed request still gets its close
            request_id = 0
        error = env_pb.Error(code=_UNAVAILABLE, message=exc.message, log_tail=exc.log_tail)
        await websocket.send_bytes(env_pb.EnvResponse(id=request_id, error=error).SerializeToString())
    await websocket.close(close_code(exc), close_reason(exc.message))


async def _text_command(websocket: WebSocket, gateway: Gateway, session_id: str, text: str) -> bool:
    """Answer one JSON command (and send the frame it announces); False when the socket was closed."""
    ident, op = None, None
    jpeg: bytes | None = None
    started = time.perf_counter()
    try:
        ident, op, message = message_head(text)
        command = parse_command(message, session_id)
        with command_span(session_id, str(op)):
            result, jpeg = await run_command(gateway.commands, session_id, command)
    except GatewayError as exc:
        error: dict[str, Any] = {"status": exc.status, **error_body(exc)}
        error["field"] = error.get("field") or getattr(exc, "field", "") or None  # always there: null for none
        error.setdefault("log_tail", None)
        await websocket.send_text(answer_text({"id": ident, "op": op, "error": error}))
        if isinstance(exc, (SessionGoneError, SessionNotFoundError)):
            await websocket.close(close_code(exc), close_reason(exc.message))
            return False
        return True
    await websocket.send_text(answer_text({"id": ident, "op": op, "result": result}))
    if jpeg is not None:
        await websocket.send_bytes(jpeg)
    gateway.metrics.stream_seconds.took(BROWSER_PATH, time.perf_counter() - started)
    return True


def add_stream_schemas(app: FastAPI) -> None:
    """Declare the stream's messages (`schemas.stream.openapi_components`) in the app's OpenAPI
    document's `components.schemas` (a WebSocket route has no place in its paths); names the REST
    routes already declare (shared models) are kept as they are."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = build()
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in openapi_components().items():
                schemas.setdefault(name, schema)
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]
