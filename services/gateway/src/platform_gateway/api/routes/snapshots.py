"""Saved snapshots, kept by the recorder; sessions save them (`POST /v0/sessions/{id}/saved-snapshots`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from platform_contracts import limits

from platform_gateway.api.deps import AccessDep, IdentityDep, RecorderDep
from platform_gateway.json_views import saved_snapshot_json
from platform_gateway.schemas.recordings import STORED_ID_PATTERN
from platform_gateway.schemas.sessions import ErrorPublic, SavedSnapshotPublic, SavedSnapshotsPublic

router = APIRouter(
    prefix="/snapshots", tags=["snapshots"],
    responses={code: {"model": ErrorPublic} for code in (404, 422, 503)},
)


@router.get("", response_model=SavedSnapshotsPublic)
async def list_saved_snapshots(recorder: RecorderDep, access: AccessDep, identity: IdentityDep,
                               env_id: str | None = None, session_id: str | None = None) -> SavedSnapshotsPublic:
    """Saved snapshots (your team's), newest first, optionally of one environment or session."""
    found = await recorder.list_saved_snapshots(env_id, session_id, access.list_filter(identity))
    saved = [SavedSnapshotPublic.model_validate(saved_snapshot_json(s))
             for s in access.visible(identity, found, lambda s: s.team)]
    return SavedSnapshotsPublic(data=saved, count=len(saved))


@router.get("/{snapshot_id}", response_model=SavedSnapshotPublic)
async def get_saved_snapshot(
    snapshot_id: Annotated[str, Path(min_length=1, max_length=limits.MAX_STORED_ID_LENGTH, pattern=STORED_ID_PATTERN)],
    recorder: RecorderDep,
) -> SavedSnapshotPublic:
    """One saved snapshot: its environment, arguments and moment."""
    return SavedSnapshotPublic.model_validate(saved_snapshot_json(await recorder.get_saved_snapshot(snapshot_id)))
