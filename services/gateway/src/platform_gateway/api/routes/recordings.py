"""Recordings, listed and described by the recorder."""

from __future__ import annotations

from fastapi import APIRouter

from platform_gateway.api.deps import RecorderDep, TokenDep
from platform_gateway.schemas.recordings import RecordingPublic, RecordingsPublic
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(
    prefix="/recordings", tags=["recordings"], dependencies=[TokenDep],
    responses={code: {"model": ErrorPublic} for code in (401, 404, 503)},
)


@router.get("", response_model=RecordingsPublic)
async def list_recordings(recorder: RecorderDep, env_id: str | None = None, session_id: str | None = None) -> dict:
    recordings = await recorder.list_recordings(env_id=env_id, session_id=session_id)
    return {"data": recordings, "count": len(recordings)}


@router.get("/{recording_id}", response_model=RecordingPublic)
async def get_recording(recording_id: str, recorder: RecorderDep) -> dict:
    """The recording's metadata (`meta.json`)."""
    return await recorder.get_recording(recording_id)
