"""`/v0/sessions/{id}/stream`: the SDK's fast path, and JSON commands for browsers.

A BINARY message is a serialized `EnvRequest`: its bytes go unparsed to the session's gRPC
stream and the response's bytes come back as one binary message. A TEXT message is a JSON
command `{"id": ..., "op": "reset|step|snapshot|restore|render", ...}` answered with JSON
`{"id": ..., "op": ..., "result": {...}}` or `{"id": ..., "op": ..., "error": {...}}`.

Close codes: 4401 bad token (when the server cannot answer HTTP 401), 4404 unknown
session, 4410 closed or crashed session (after sending the response that says so), 1013
the broker or the env host cannot be reached, 1011 other failures.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_gateway import wire
from platform_gateway.api.deps import token_ok
from platform_gateway.api.errors import error_body
from platform_gateway.errors import (
    GatewayError,
    NotFoundError,
    SessionGoneError,
    SessionNotFoundError,
    UnavailableError,
)
from platform_gateway.gateway import Gateway
from platform_gateway.json_ops import run_json

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
    if not await _authorized(websocket, gateway.settings.api_token):
        return
    await websocket.accept()
    streams = gateway.streams
    try:
        await streams.directory.running(session_id)
    except GatewayError as exc:
        await websocket.close(close_code(exc), close_reason(exc.message))
        return
    try:
        await _serve(websocket, gateway, session_id)
    except (WebSocketDisconnect, OSError):  # the client went away mid-answer
        return


async def _serve(websocket: WebSocket, gateway: Gateway, session_id: str) -> None:
    streams = gateway.streams
    receive, send, exchange = websocket.receive, websocket.send, streams.exchange
    while True:
        message = await receive()
        data = message.get("bytes")
        if data is not None:
            try:
                response = await exchange(session_id, data)
            except GatewayError as exc:
                await _fail_binary(websocket, data, exc)
                return
            await send({"type": "websocket.send", "bytes": response})
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


async def _authorized(websocket: WebSocket, expected: str | None) -> bool:
    if not expected:
        return True
    token = websocket.query_params.get("token")
    header = websocket.headers.get("authorization", "")
    if token is None and header.lower().startswith("bearer "):
        token = header[7:].strip()
    if token_ok(expected, token):
        return True
    detail = ("this platform needs an API token: pass `?token=<token>` or `Authorization: Bearer <token>`"
              if token is None else "the API token is not valid")
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(JSONResponse({"detail": detail, "code": "unauthenticated"}, 401))
    else:
        await websocket.accept()
        await websocket.close(4401, close_reason(detail))
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
    """Answer one JSON command; False when the socket was closed."""
    try:
        message = json.loads(text)
    except ValueError as exc:
        await websocket.send_json({"id": None, "error": _error_json(422, "invalid_argument", f"not JSON: {exc}")})
        return True
    if not isinstance(message, dict):
        detail = 'a command is a JSON object like {"id": 1, "op": "step", "action": 0}'
        await websocket.send_json({"id": None, "error": _error_json(422, "invalid_argument", detail)})
        return True
    answer: dict[str, Any] = {"id": message.get("id"), "op": message.get("op")}
    try:
        answer["result"] = await run_json(gateway.commands, session_id, message)
    except GatewayError as exc:
        answer["error"] = {"status": exc.status, **error_body(exc)}
        await websocket.send_json(answer)
        if isinstance(exc, (SessionGoneError, SessionNotFoundError)):
            await websocket.close(close_code(exc), close_reason(exc.message))
            return False
        return True
    await websocket.send_json(answer)
    return True


def _error_json(status: int, code: str, detail: str) -> dict[str, Any]:
    return {"status": status, "code": code, "detail": detail}
