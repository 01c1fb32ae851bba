"""Recordings, served by the recorder: listings, meta, episodes for replay, downloads, deletion."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Annotated, Literal

import numpy as np
from fastapi import APIRouter, Path, Query, Response, status
from fastapi.responses import StreamingResponse
from platform_contracts import limits
from platform_contracts.recorder_json import (
    array_json,
    array_of,
    message_to_json,
    recording_to_json,
    summary_to_json,
)

from platform_gateway.api.deps import AccessDep, IdentityDep, RecorderDep
from platform_gateway.archive import stream_archive
from platform_gateway.errors import NotFoundError
from platform_gateway.recorder import RecorderClient
from platform_gateway.schemas.recordings import (
    STORED_ID_PATTERN,
    ArrayPublic,
    ArrayShapePublic,
    DigestsPublic,
    EpisodePublic,
    RecordingPublic,
    RecordingsPublic,
    RecordingSummaryPublic,
)
from platform_gateway.schemas.sessions import LIFE_NAME_PATTERN, ErrorPublic

router = APIRouter(
    prefix="/recordings", tags=["recordings"],
    responses={code: {"model": ErrorPublic} for code in (404, 422, 503)},
)

RecordingId = Annotated[str, Path(
    min_length=1, max_length=limits.MAX_STORED_ID_LENGTH, pattern=STORED_ID_PATTERN,
    description="a recording's id: its session's (or a vector session's sub-session's, `<id>-<index>`)",
)]
EpisodeIndex = Annotated[int, Path(ge=0, description="the episode's index (meta.json's episodes[].index)")]
_EPISODE_FILE = "episode-{:06d}.npz"


def _attachment(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}


@router.get("", response_model=RecordingsPublic)
async def list_recordings(
    recorder: RecorderDep, access: AccessDep, identity: IdentityDep, env_id: str | None = None,
    session_id: Annotated[str | None, Query(min_length=1, max_length=limits.MAX_STORED_ID_LENGTH,
                                            pattern=STORED_ID_PATTERN)] = None,
    life: Annotated[str | None, Query(pattern=LIFE_NAME_PATTERN, description="a life's name")] = None,
) -> RecordingsPublic:
    """Recordings, newest first: meta.json without the episode list, with `episode_count`,
    `step_count`, `total_return`, the session's `saved_snapshots` and `open_episode` (the
    episode being recorded: its steps so far). `session_id` also lists a vector session's
    sub-session recordings."""
    recordings = await recorder.list_recordings(env_id=env_id, session_id=session_id, life=life,
                                                team=access.list_filter(identity))
    visible = access.visible(identity, [summary_to_json(s) for s in recordings], lambda r: r.get("team"))
    return RecordingsPublic(data=[RecordingSummaryPublic.model_validate(r) for r in visible], count=len(visible))


@router.get("/{recording_id}", response_model=RecordingPublic)
async def get_recording(recording_id: RecordingId, recorder: RecorderDep) -> RecordingPublic:
    """The recording's metadata (`meta.json`: its episodes with their seeds and reset options),
    with `world_changes` from its `recording.json` and `open_episode` (the episode being
    recorded: its steps so far; null when none)."""
    return RecordingPublic.model_validate(recording_to_json(await recorder.get_recording(recording_id)))


@router.delete("/{recording_id}", status_code=status.HTTP_204_NO_CONTENT,
               responses={409: {"model": ErrorPublic, "description": "the recording is still recording"}})
async def delete_recording(recording_id: RecordingId, recorder: RecorderDep) -> Response:
    """Delete a closed recording's files. The saved snapshots its session made stay."""
    await recorder.delete_recording(recording_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{recording_id}/archive", response_class=StreamingResponse,
            responses={200: {"content": {"application/x-tar": {}}, "description": "a .tar of its files"}})
async def download_archive(recording_id: RecordingId, recorder: RecorderDep) -> StreamingResponse:
    """The recording's finished files (meta.json, recording.json, episode-NNNNNN.npz) as a `.tar`
    under `<recording_id>/`, streamed."""
    files = [(f.name, f.size) for f in await recorder.recording_files(recording_id)]
    return StreamingResponse(stream_archive(recorder, recording_id, files), media_type="application/x-tar",
                             headers=_attachment(f"{recording_id}.tar"))


@router.get("/{recording_id}/episodes/{index}", response_model=EpisodePublic)
async def get_episode(
    recording_id: RecordingId, index: EpisodeIndex, recorder: RecorderDep,
    arrays: Annotated[str | None, Query(description="array names, e.g. rewards,actions")] = None,
) -> EpisodePublic:
    """An episode: summary, array names and shapes, frame count; `?arrays=` adds arrays as JSON. The
    open episode of a recording in progress (its `open_episode`) is served as written so far,
    with `in_progress: true`."""
    names = [n.strip() for n in arrays.split(",") if n.strip()] if arrays else []
    reply = await recorder.episode(recording_id, index, arrays=names)
    return EpisodePublic(
        recording_id=recording_id, index=index, episode=message_to_json(reply.episode),
        array_names=list(reply.array_names),
        array_shapes={n: ArrayShapePublic(dtype=a.dtype, shape=list(a.shape)) for n, a in reply.array_shapes.items()},
        frame_count=reply.frame_count,
        arrays={n: ArrayPublic.model_validate(array_json(array_of(a))) for n, a in reply.arrays.items()},
        in_progress=reply.in_progress,
    )


@router.get("/{recording_id}/episodes/{index}/digests", response_model=DigestsPublic)
async def get_digests(recording_id: RecordingId, index: EpisodeIndex, recorder: RecorderDep) -> DigestsPublic:
    """The digest of each observation row of a finished episode (row 0: the reset's), as the
    session stream gives them with `"observation": "digest"`: what a play back compares."""
    return DigestsPublic(observations=await recorder.episode_digests(recording_id, index))


@router.get("/{recording_id}/episodes/{index}/arrays/{name}", response_model=ArrayPublic,
            responses={200: {"content": {"application/octet-stream": {}},
                             "description": "JSON, or with ?format=npy the array as a .npy file"}})
async def get_array(
    recording_id: RecordingId, index: EpisodeIndex, name: str, recorder: RecorderDep,
    array_format: Annotated[Literal["json", "npy"], Query(alias="format")] = "json",
) -> ArrayPublic | Response:
    """One array of an episode, as JSON (`{"dtype", "shape", "data"}`) or a `.npy` file (`numpy.load`)."""
    reply = await recorder.episode(recording_id, index, arrays=[name])
    if name not in reply.arrays:
        raise NotFoundError(f"recording {recording_id!r} episode {index} has no array {name!r}")
    array = array_of(reply.arrays[name])
    if array_format == "json":
        return ArrayPublic.model_validate(array_json(array))
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return Response(buffer.getvalue(), media_type="application/octet-stream",
                    headers=_attachment(f"{recording_id}-episode-{index:06d}-{name}.npy"))


@router.get("/{recording_id}/episodes/{index}/frames/{frame}", response_class=Response,
            responses={200: {"content": {"image/jpeg": {}}, "description": "the frame's JPEG"}})
async def get_frame(
    recording_id: RecordingId, index: EpisodeIndex, recorder: RecorderDep,
    frame: Annotated[int, Path(ge=0, description="the frame's row: 0 is the reset's, i the i-th step's")],
) -> Response:
    """One recorded frame (JPEG) of an episode, by row."""
    frames = (await recorder.episode(recording_id, index, frames=[frame])).frames
    if frame not in frames:
        raise NotFoundError(f"recording {recording_id!r} episode {index} has no frame {frame}")
    return Response(frames[frame], media_type="image/jpeg")


@router.get("/{recording_id}/episodes/{index}/file", response_class=StreamingResponse,
            responses={200: {"content": {"application/octet-stream": {}}, "description": "the .npz"}})
async def download_episode_file(
    recording_id: RecordingId, index: EpisodeIndex, recorder: RecorderDep
) -> StreamingResponse:
    """The episode's `.npz` as stored (opens with `numpy.load`), streamed."""
    name = _EPISODE_FILE.format(index)
    sizes = {f.name: f.size for f in await recorder.recording_files(recording_id)}
    if name not in sizes:
        raise NotFoundError(f"recording {recording_id!r} has no finished episode {index}")
    headers = {**_attachment(f"{recording_id}-{name}"), "Content-Length": str(sizes[name])}
    return StreamingResponse(_read_all(recorder, recording_id, name, sizes[name]),
                             media_type="application/octet-stream", headers=headers)


async def _read_all(
    recorder: RecorderClient, recording_id: str, name: str, size: int
) -> AsyncIterator[bytes]:
    offset, chunk = 0, recorder.read_chunk
    while offset < size:
        data = await recorder.read_file(recording_id, name, offset, min(chunk, size - offset))
        if not data:
            raise NotFoundError(f"recording {recording_id!r}: {name} ended early (it was deleted?)")
        offset += len(data)
        yield data

