"""Translate gateway errors (and malformed requests) into JSON responses.

Every error answer is `{"detail": sentence, "code": code}` (`schemas.sessions.ErrorPublic`),
with `"field"` naming the request field at fault when there is one (a body or query field by
its name, a session kwarg as `kwargs.<name>`, from the broker or FastAPI's validation), also
those Starlette makes itself: an unknown route (404), a method a route does not take
(405, with `Allow` naming every method of the path), a body that cannot be read (422), and
an unexpected exception (500).
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from platform_contracts import names
from starlette.exceptions import HTTPException

from platform_gateway.errors import GatewayError, SessionGoneError
from platform_gateway.schemas.recordings import STORED_ID_PATTERN, STORED_ID_RULE
from platform_gateway.schemas.runs import (
    METRIC_NAME_PATTERN,
    METRIC_NAME_RULE,
    METRIC_NAMES_PATTERN,
    RUN_ID_PATTERN,
    RUN_ID_RULE,
    TEXT_PATTERN,
)

_PARAMETER = re.compile(r"\\\{[^}]*\\\}")  # a path parameter of re.escape(template)
_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


_LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})


def error_body(exc: GatewayError) -> dict[str, str]:
    body = {"detail": exc.message, "code": exc.code}
    if exc.log_tail or isinstance(exc, SessionGoneError):
        body["log_tail"] = exc.log_tail
    if exc.field:
        body["field"] = exc.field
    return body


async def _gateway_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GatewayError)
    return JSONResponse(error_body(exc), status_code=exc.status, headers=dict(exc.headers) or None)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own errors (routing, unreadable bodies) in the gateway's error shape."""
    assert isinstance(exc, HTTPException)
    where = f"{request.method} {request.url.path}"
    headers = dict(exc.headers or {})
    status, code, detail = exc.status_code, "invalid_argument", str(exc.detail)
    if status == 404:
        code, detail = "not_found", f"no route {where} (the routes are in /docs)"
    elif status == 405:
        headers["Allow"] = allow = ", ".join(_methods_of(request))
        code, detail = "method_not_allowed", f"{where}: the method is not allowed here (allowed: {allow})"
    elif status == 400 and exc.__cause__ is not None:  # FastAPI could not decode the JSON body
        status = 422
        detail = (f"invalid request to {where}: the body is not valid JSON ({exc.__cause__}): "
                  "send a JSON object in UTF-8 with Content-Type: application/json")
    elif status >= 500:
        code = "internal"
    return JSONResponse({"detail": detail, "code": code}, status_code=status, headers=headers or None)


def _methods_of(request: Request) -> list[str]:
    """Every method the OpenAPI document gives the request's path (Starlette names only one
    route's, and FastAPI's included routers keep their routes to themselves)."""
    path, methods = request.url.path, set[str]()
    for template, operations in request.app.openapi()["paths"].items():
        if re.fullmatch(_PARAMETER.sub("[^/]+", re.escape(template)), path):
            methods.update(method.upper() for method in operations if method in _METHODS)
    return sorted(methods)


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    """A bug: still a JSON answer (Starlette logs the traceback after it)."""
    detail = f"{request.method} {request.url.path} failed inside the gateway ({type(exc).__name__}): see its log"
    return JSONResponse({"detail": detail, "code": "internal"}, status_code=500)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 with one readable sentence first, then FastAPI's per-field details in `errors`."""
    assert isinstance(exc, RequestValidationError)
    problems = [_problem(error) for error in exc.errors()]
    detail = f"invalid request to {request.method} {request.url.path}: " + "; ".join(problems or ["invalid"])
    detail += " (the expected bodies are in /docs)"
    errors = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
    body: dict[str, Any] = {"detail": detail, "code": "invalid_argument", "errors": errors}
    field = next((name for name in map(_field, exc.errors()) if name), None)
    if field:
        body["field"] = field
    return JSONResponse(body, status_code=422)


def _field(error: dict[str, Any]) -> str | None:
    """The field a validation error is about, as the body names it ("jpeg_quality",
    "life.frame_every"); None for the body as a whole or JSON that cannot be read."""
    if error.get("type") == "json_invalid":
        return None
    loc = [str(part) for part in error.get("loc", ())]
    if loc[:1] and loc[0] in _LOCATIONS:
        loc = loc[1:]
    return ".".join(loc) or None


# Patterns of the API's fields in words, so that a mismatch says what to send rather than the regex.
_PATTERN_RULES = {
    STORED_ID_PATTERN: f"an id: {STORED_ID_RULE}",
    names.LIFE_NAME_PATTERN: f"a life name: use {names.LIFE_NAME_RULE}",
    names.LABEL_PATTERN: f"a label: use {names.LABEL_RULE}",
    RUN_ID_PATTERN: f"a run id: use {RUN_ID_RULE}",
    METRIC_NAME_PATTERN: f"a metric name: use {METRIC_NAME_RULE}",
    METRIC_NAMES_PATTERN: f"metric names separated by commas, each {METRIC_NAME_RULE}",
    TEXT_PATTERN: "text without control characters (tabs and line breaks included)",
}


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
    rule = _PATTERN_RULES.get((error.get("ctx") or {}).get("pattern", "")) if kind == "string_pattern_mismatch" else None
    if rule is not None:
        return f"{where}: {error.get('input')!r} is not {rule}"
    return f"{where}: {error.get('msg', 'invalid')}"


def install(app: FastAPI) -> None:
    app.add_exception_handler(GatewayError, _gateway_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)
