"""ASGI middleware: a server span per HTTP request, in the W3C context of the request's headers.

A WebSocket connection gets one span for its whole life (not one per message: the binary
step path carries the SDK's own `trace_context` untouched).
"""

from __future__ import annotations

from opentelemetry import context, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class TracingMiddleware:
    def __init__(self, app: ASGIApp, tracer: trace.Tracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())
                   if k in (b"traceparent", b"tracestate", b"baggage")}
        parent = propagate.extract(carrier)
        method = scope.get("method", "WS")
        path = scope.get("path", "")
        token = context.attach(parent)
        try:
            with self.tracer.start_as_current_span(
                f"{method} {path}", kind=SpanKind.SERVER,
                attributes={"http.request.method": method, "url.path": path},
            ) as span:
                if kind == "websocket":
                    await self.app(scope, receive, send)
                    return

                async def send_with_status(message: Message) -> None:
                    if message["type"] == "http.response.start":
                        status = message["status"]
                        span.set_attribute("http.response.status_code", status)
                        if status >= 500:
                            span.set_status(Status(StatusCode.ERROR))
                    await send(message)

                await self.app(scope, receive, send_with_status)
        finally:
            context.detach(token)
