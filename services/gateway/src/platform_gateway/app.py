"""The FastAPI application: routes, error handlers, tracing, and the gateway's parts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from nats.aio.client import Client as NATS
from platform_contracts.tracing import setup_tracing
from starlette.types import Lifespan

from platform_gateway.api import errors
from platform_gateway.api.main import api_router
from platform_gateway.api.routes import stream
from platform_gateway.config import Settings
from platform_gateway.gateway import Gateway
from platform_gateway.openapi_numbers import exact_integer_bounds
from platform_gateway.literal_paths import LiteralPathMethods
from platform_gateway.http_metrics import HttpMetricsMiddleware
from platform_gateway.metrics_endpoint import MetricsGuard
from platform_gateway.metrics_endpoint import mount as mount_metrics
from platform_gateway.request_bounds import RequestBounds, describe
from platform_gateway.tracing_middleware import TracingMiddleware
from platform_gateway.eval_viewer import mount as mount_eval_viewer
from platform_gateway.web_app import mount as mount_web_app

DESCRIPTION = """REST and WebSocket API of the Simulusion platform.

Sessions are made of catalog environments (`GET /v0/envs`). Steps go over REST
(`/v0/sessions/{id}/step`) or, fast, over the WebSocket `/v0/sessions/{id}/stream`
(binary protobuf `EnvRequest`/`EnvResponse`, or JSON text commands).
When the platform needs a token (PLATFORM_API_TOKEN, or PLATFORM_AUTH=token and its API tokens from
`/v0/tokens`), send `Authorization: Bearer <token>`.
"""


def create_app(settings: Settings, nc: NATS) -> FastAPI:
    """The gateway's app on a connected NATS client (the caller owns and closes `nc`): the API
    and, at every other GET path, the web app (`platform_gateway.web_app`)."""
    gateway = Gateway.build(settings, nc)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await gateway.start()
        yield
        await gateway.close()

    app = api_app(gateway.identity.required, lifespan, managed=gateway.access.managed)
    app.state.gateway = gateway
    token = settings.metrics_token.get_secret_value() if settings.metrics_token else None
    open_api = not gateway.identity.required and not gateway.access.managed
    mount_metrics(app, gateway.metrics, MetricsGuard(token, open_api=open_api))
    app.state.eval_viewer = mount_eval_viewer(app, settings.evals_viewer_dist)
    app.state.web_app = mount_web_app(app, settings.web_dist)
    app.add_middleware(TracingMiddleware, tracer=setup_tracing("platform-gateway"))
    app.add_middleware(HttpMetricsMiddleware, metrics=gateway.metrics, own_routes=lambda: app.router.routes)  # outermost: every answer counted
    return app


def api_app(auth_required: bool = False, lifespan: Lifespan[FastAPI] | None = None, managed: bool = False) -> FastAPI:
    """The routes and error handlers, without the gateway's parts (`app.state.gateway`, tracing):
    all that `/openapi.json` describes, so `api_app(required).openapi()` is the served document
    (`auth_required`: every /v0 route needs a token, and the document says so)."""
    app = FastAPI(title="Simulusion platform", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    errors.install(app)
    app.include_router(api_router(auth_required, managed))
    stream.add_stream_schemas(app)  # the WebSocket's JSON messages, for generated clients
    app.add_middleware(RequestBounds)  # every body's limit, before it is read
    # a literal path's own methods in a 405's Allow, not a templated sibling's (literal_paths)
    app.add_middleware(LiteralPathMethods, document=lambda: app.openapi())
    build_document = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            # the limits, stated once for every route; integer bounds exact
            app.openapi_schema = describe(exact_integer_bounds(build_document()))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.get("/healthz", tags=["health"])
    async def healthz(request: Request) -> dict[str, Any]:
        """Whether the gateway runs and reaches NATS."""
        nc = request.app.state.gateway.nc
        return {"ok": True, "nats": "connected" if nc.is_connected else "disconnected"}

    return app
