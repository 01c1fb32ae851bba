"""The /v0 API: every resource's router."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from platform_gateway.api.deps import TeamGuardDep, TokenDep
from platform_gateway.api.routes import comparisons, doom, envs, episodes, recordings, sessions, snapshots, stream, tokens
from platform_gateway.api.routes import evals, experiments, identity, machines, members, runs, teams, usage, wheels
from platform_gateway.schemas.sessions import ErrorPublic

_UNAUTHENTICATED: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorPublic, "description": "no token, or one that is unknown, revoked or expired (the detail says which)"}}


API_PREFIX = "/v0"


def api_router(auth_required: bool, managed: bool = False) -> APIRouter:
    """The /v0 routes. When the platform needs a token (PLATFORM_API_TOKEN, PLATFORM_AUTH=token)
    every REST route requires one, and the OpenAPI document says so (an HTTP bearer security
    scheme and the 401 answer); otherwise neither appears. The WebSocket checks the token itself
    (a browser cannot set its headers).

    On a managed platform (`managed`) every REST route passes `team_access`'s guard too (after
    the token: it needs the caller), and the stream asks it for its session."""
    router = APIRouter(prefix=API_PREFIX)
    dependencies = ([TokenDep] if auth_required else []) + ([TeamGuardDep] if managed else [])
    responses: dict[int | str, dict[str, Any]] = dict(_UNAUTHENTICATED) if auth_required else {}
    for resource in (envs, sessions, recordings, episodes, snapshots, comparisons, doom, machines, experiments, evals,
                     runs, tokens,
                     teams, members, usage):
        router.include_router(resource.router, dependencies=dependencies, responses=responses)
    router.include_router(wheels.router, dependencies=dependencies, responses=responses)
    router.include_router(identity.router, dependencies=dependencies, responses=responses)
    router.include_router(identity.open_router)  # how to sign in: asked before there is a token
    router.include_router(stream.router)
    router.include_router(experiments.stream_router)
    return router
