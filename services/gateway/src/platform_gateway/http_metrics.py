"""ASGI middleware: each HTTP request counted by route template, method and status, and timed.

The route is the template the router matched (`/v0/sessions/{session_id}/step`), read from the
scope after the app ran: FastAPI puts the route of an included router there with its own path,
so a route that is not one of the app's own is the API router's, under `/v0`; a path no route matched counts as `unmatched`, and a method outside
HTTP's usual ones as `other`, so the label sets stay bounded whatever clients send. WebSocket
connections are not counted here (their requests are: `GatewayMetrics.*_stream_seconds`).
Per request: one `perf_counter` pair, a dict lookup of the series, an increment and an observe.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from platform_gateway.api.main import API_PREFIX
from platform_gateway.metrics import GatewayMetrics

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"


class HttpMetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: GatewayMetrics, own_routes: Callable[[], Iterable[BaseRoute]]) -> None:
        self.app = app
        self._own_routes = own_routes
        self._own: frozenset[int] | None = None
        self._requests = metrics.http_requests
        self._seconds = metrics.http_seconds
        self._series: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # an app that fails before it answers: Starlette's error answer

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            self._count(scope, status, time.perf_counter() - started)

    def _top_level(self) -> frozenset[int]:
        """The app's own routes (taken at the first request: every route is added by then)."""
        if self._own is None:
            self._own = frozenset(id(route) for route in self._own_routes())
        return self._own

    def _count(self, scope: Scope, status: int, seconds: float) -> None:
        matched = scope.get("route")
        template = getattr(matched, "path", None)
        if template is None:
            route = UNMATCHED
        elif id(matched) in self._top_level():
            route = template
        else:  # a route of the one included router, the API's: its path is relative to /v0
            route = API_PREFIX + template
        method = scope.get("method", "")
        key = (route, method, status)
        series = self._series.get(key)
        if series is None:
            label = method if method in _METHODS else "other"
            series = self._series[key] = (self._requests.labels(route, label, str(status)),
                                          self._seconds.labels(route, label))
        series[0].inc()
        series[1].observe(seconds)
