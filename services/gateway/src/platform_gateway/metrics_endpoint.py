"""`GET /metrics`: the whole platform's metrics in Prometheus' text format, behind a token.

The gateway gathers every other service's exposition over the bus
(`platform_bus.metrics_gather.MetricsGatherer`), adds its own and merges them, each series labelled with its
`service` and `replica`. With `PLATFORM_METRICS_TOKEN` set a request must carry
`Authorization: Bearer <token>` (compared in constant time); without it or with another one
the answer is a JSON 401. Unset, `/metrics` is as open as the API: open when the API needs no
token, and refused (403 naming the variable) in managed mode or when the API needs a token,
so a locked-down platform never shows its sessions, teams and environments to anyone.
"""

from __future__ import annotations

import hmac

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from platform_bus.metrics_gather import EXPOSITION_CONTENT_TYPE, Exposition, MetricsGatherer, merge_expositions

from platform_gateway.metrics import GatewayMetrics

TOKEN_VARIABLE = "PLATFORM_METRICS_TOKEN"


class MetricsGuard:
    """Who may read `/metrics`: `token` set: its bearers; unset: everyone when `open_api`."""

    def __init__(self, token: str | None, *, open_api: bool) -> None:
        self._token = token.encode() if token else None
        self._open = open_api

    def refusal(self, authorization: str | None) -> JSONResponse | None:
        """None: let the request through; else the answer that refuses it."""
        if self._token is None:
            if self._open:
                return None
            return JSONResponse({"detail": f"/metrics is off: this platform needs a token for its API, so "
                                           f"/metrics needs its own: set {TOKEN_VARIABLE} on the gateway",
                                 "code": "permission_denied"}, 403)
        scheme, _, presented = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            return _unauthenticated("/metrics needs `Authorization: Bearer <token>` with the token of "
                                    f"{TOKEN_VARIABLE}")
        if not hmac.compare_digest(presented.strip().encode(), self._token):
            return _unauthenticated(f"/metrics: the bearer token is not {TOKEN_VARIABLE}'s")
        return None


def _unauthenticated(detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail, "code": "unauthenticated"}, 401,
                        headers={"WWW-Authenticate": 'Bearer realm="metrics"'})


def mount(app: FastAPI, metrics: GatewayMetrics, guard: MetricsGuard) -> None:
    """Add `GET /metrics` to `app` (not in the OpenAPI document: it is for Prometheus)."""
    gatherers: list[MetricsGatherer] = []  # made at the first scrape, on the gateway's NATS client

    @app.get("/metrics", include_in_schema=False)
    async def platform_metrics(request: Request) -> Response:
        refused = guard.refusal(request.headers.get("authorization"))
        if refused is not None:
            return refused
        if not gatherers:
            gatherers.append(MetricsGatherer(request.app.state.gateway.nc))
        expositions = await gatherers[0].gather()
        metrics.answered(expositions)
        own = (await metrics.service.exposition()).decode()
        merged = merge_expositions([Exposition("gateway", metrics.service.replica, own), *expositions])
        return Response(merged, media_type=EXPOSITION_CONTENT_TYPE, headers={"Cache-Control": "no-store"})
