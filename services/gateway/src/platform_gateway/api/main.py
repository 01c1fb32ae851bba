"""The /v0 API: every resource's router."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from platform_gateway.api.deps import TokenDep
from platform_gateway.api.routes import comparisons, doom, envs, recordings, sessions, snapshots, stream
from platform_gateway.api.routes import wheels
from platform_gateway.schemas.sessions import ErrorPublic

_UNAUTHENTICATED: dict[int | str, dict[str, Any]] = {401: {"model": ErrorPublic, "description": "no API token, or not the platform's"}}


def api_router(api_token: str | None) -> APIRouter:
    """The /v0 routes. With an API token (PLATFORM_API_TOKEN) every REST route requires it, and
    the OpenAPI document says so (an HTTP bearer security scheme and the 401 answer); without
    one, neither appears. The WebSocket checks the token itself (a browser cannot set its headers)."""
    router = APIRouter(prefix="/v0")
    dependencies = [TokenDep] if api_token else []
    responses: dict[int | str, dict[str, Any]] = dict(_UNAUTHENTICATED) if api_token else {}
    for resource in (envs, sessions, recordings, snapshots, comparisons, doom):
        router.include_router(resource.router, dependencies=dependencies, responses=responses)
    router.include_router(wheels.router, dependencies=dependencies, responses=responses)
    router.include_router(stream.router)
    return router
