"""Translate gateway errors (and malformed requests) into JSON responses."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from platform_gateway.errors import GatewayError, SessionGoneError


def error_body(exc: GatewayError) -> dict[str, str]:
    body = {"detail": exc.message, "code": exc.code}
    if exc.log_tail or isinstance(exc, SessionGoneError):
        body["log_tail"] = exc.log_tail
    return body


async def _gateway_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GatewayError)
    return JSONResponse(error_body(exc), status_code=exc.status)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 with one readable sentence first, then FastAPI's per-field details in `errors`."""
    assert isinstance(exc, RequestValidationError)
    problems = [_problem(error) for error in exc.errors()]
    detail = f"invalid request to {request.method} {request.url.path}: " + "; ".join(problems or ["invalid"])
    detail += " (the expected bodies are in /docs)"
    errors = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
    return JSONResponse({"detail": detail, "code": "invalid_argument", "errors": errors}, status_code=422)


def _problem(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    loc = [str(part) for part in error.get("loc", ())]
    if kind == "json_invalid":
        why = (error.get("ctx") or {}).get("error", "")
        return f"the body is not valid JSON ({why}): send a JSON object with Content-Type: application/json"
    if kind == "missing" and loc == ["body"]:
        return "the body is missing: send a JSON object with Content-Type: application/json"
    where = ".".join(loc[1:] if loc[:1] == ["body"] else loc) or "body"
    if kind == "extra_forbidden":
        return f"{where}: unknown field"
    return f"{where}: {error.get('msg', 'invalid')}"


def install(app: FastAPI) -> None:
    app.add_exception_handler(GatewayError, _gateway_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
