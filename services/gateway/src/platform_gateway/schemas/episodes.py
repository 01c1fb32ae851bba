"""The episode browser: finished episodes across recordings (`GET /v0/episodes`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from platform_gateway.schemas.recordings import EpisodeEntryPublic


class ListedEpisodePublic(BaseModel):
    """One finished episode and the recording it is in."""

    recording_id: str
    session_id: str
    env_id: str | None = None
    team: str | None = None
    created_at: str | None = Field(None, description="when its recording began")
    episode: EpisodeEntryPublic = Field(
        description="meta.json's entry: index, length, return, seed, terminated, truncated, is_success, outcome, ...")


class EpisodesPublic(BaseModel):
    """A page of the episodes that match, in the order asked for."""

    data: list[ListedEpisodePublic]
    count: int = Field(description="episodes on this page")
    total: int = Field(description="episodes that match, on every page")
    outcomes: list[str] = Field(description="the outcomes met among the episodes that match but for `outcome`: "
                                "the choices of an outcome filter")
    next_cursor: str | None = Field(None, description="pass as `cursor` for the next page; null on the last")
