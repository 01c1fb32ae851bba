"""The episode browser: every finished episode of the recordings, served by the recorder."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from platform_contracts.recorder_json import message_to_json
from simulusion.recorder.v1 import recorder_pb2 as rec

from platform_gateway.api.deps import AccessDep, IdentityDep, RecorderDep
from platform_gateway.schemas.episodes import EpisodesPublic, ListedEpisodePublic
from platform_gateway.schemas.recordings import EpisodeEntryPublic
from platform_gateway.schemas.sessions import ErrorPublic

router = APIRouter(
    prefix="/episodes", tags=["recordings"],
    responses={code: {"model": ErrorPublic} for code in (422, 503)},
)

MAX_PAGE = 500
EpisodeSort = Literal["newest", "oldest", "return", "-return", "length", "-length"]


@router.get("", response_model=EpisodesPublic)
async def list_episodes(
    recorder: RecorderDep, access: AccessDep, identity: IdentityDep,
    env_id: Annotated[str | None, Query(min_length=1, max_length=200, description="only this environment's")] = None,
    outcome: Annotated[str | None, Query(min_length=1, max_length=200,
                                         description="only episodes with this outcome (info[\"outcome\"] of their "
                                         "last step, e.g. Doom's died, exit, completed, timeout)")] = None,
    success: Annotated[bool | None, Query(description="true: only successes; false: only failures (episodes "
                                          "whose last step reported is_success false)")] = None,
    sort: Annotated[EpisodeSort, Query(description="newest (recordings newest first, episodes in order), oldest, "
                                       "return or length (lowest first), -return or -length (highest first)")]
    = "newest",
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="episodes per page")] = 100,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,9}$",
                                        description="a previous page's `next_cursor`")] = None,
) -> EpisodesPublic:
    """Finished episodes across recordings (your team's), filtered and sorted, a page at a time."""
    offset = int(cursor) if cursor else 0
    reply = await recorder.list_episodes(env_id=env_id, team=access.list_filter(identity), outcome=outcome,
                                         is_success=success, sort=sort, offset=offset, limit=limit)
    listed = [_listed(e) for e in reply.episodes]
    visible = access.visible(identity, listed, lambda e: e.team)
    more = offset + len(reply.episodes) < reply.total
    return EpisodesPublic(data=visible, count=len(visible), total=reply.total, outcomes=list(reply.outcomes),
                          next_cursor=str(offset + len(reply.episodes)) if more else None)


def _listed(found: rec.ListedEpisode) -> ListedEpisodePublic:
    return ListedEpisodePublic(
        recording_id=found.recording_id, session_id=found.session_id,
        env_id=found.env_id if found.HasField("env_id") else None,
        team=found.team if found.HasField("team") else None,
        created_at=found.created_at if found.HasField("created_at") else None,
        episode=EpisodeEntryPublic.model_validate(message_to_json(found.episode)),
    )
