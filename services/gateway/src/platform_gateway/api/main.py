"""The /v0 API: every resource's router."""

from __future__ import annotations

from fastapi import APIRouter

from platform_gateway.api.routes import envs, recordings, sessions, snapshots, stream

api_router = APIRouter(prefix="/v0")
api_router.include_router(envs.router)
api_router.include_router(sessions.router)
api_router.include_router(stream.router)
api_router.include_router(recordings.router)
api_router.include_router(snapshots.router)
