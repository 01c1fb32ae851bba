"""Recordings: their metadata is the recorder's `meta.json`, passed through as it is."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# What the recorder takes as a recording or saved snapshot id (it names a folder).
STORED_ID_PATTERN = r"^[^./\\\x00](\.?[^./\\\x00])*\.?$"
STORED_ID_RULE = "an id must not contain '/', '\\' or '..', nor start with '.', nor hold a NUL byte"


class SavedSnapshotRef(BaseModel):
    """A saved snapshot made by a recording's session (`GET /v0/snapshots/{id}` has the rest)."""

    id: str
    label: str | None = None
    seq: int | None = None
    created_at: float | None = None


class OpenEpisodePublic(BaseModel):
    """The episode a recording in progress is recording, as written so far (it is in no
    meta.json until it ends; `GET .../episodes/{index}` serves it with `in_progress: true`)."""

    index: int
    length: int = Field(description="its steps so far")
    return_: float | str = Field(alias="return", description='its rewards so far summed; "nan"/"inf" when not finite')
    first_seq: int
    last_seq: int

    model_config = ConfigDict(populate_by_name=True)


class RecordingSummaryPublic(BaseModel):
    """meta.json without its episode list, plus the episode count, the steps and return of all its
    episodes and the session's saved snapshots."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    session_id: str | None = None
    env_id: str | None = None
    status: str | None = None
    created_at: str | None = None
    life: str | None = None
    episode_count: int = Field(0, description="its finished episodes")
    step_count: int = Field(0, description="the finished episodes' lengths summed (not the open episode's)")
    total_return: float | str | None = Field(
        None, description='the episodes\' returns summed; null without an episode; "nan"/"inf" when not finite')
    saved_snapshots: list[SavedSnapshotRef] = Field(default_factory=list)
    open_episode: OpenEpisodePublic | None = Field(
        None, description="the episode being recorded, as written so far; null when none")


class EpisodeEntryPublic(BaseModel):
    """One finished episode as meta.json lists it (docs/recording-format.md has every member)."""

    model_config = ConfigDict(extra="allow")

    index: int
    file: str | None = None
    length: int | None = None
    seed: int | None = Field(None, description="the seed of the reset that started it; null when none was given")
    reset_options: dict[str, Any] | None = Field(None, description="the options of that reset; null when none")


class RecordingPublic(BaseModel):
    """A recording's meta.json, with recording.json's `world_changes` and `spec`."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    session_id: str | None = None
    env_id: str | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict)
    episodes: list[EpisodeEntryPublic] = Field(default_factory=list)
    world_changes: list[dict[str, Any]] = Field(
        default_factory=list, description="the world changes applied during the session (recording.json), in the "
        "order of their step events: each timeline entry plus `index`, `session_step`, `seq` (the step event "
        "that applied it), `episode` and `episode_step`")
    spec: dict[str, Any] | None = Field(
        None, description="the environment's spec as the session started (recording.json): spaces, "
        "observation_labels, metadata (e.g. control_rate); null when not known")
    open_episode: OpenEpisodePublic | None = Field(
        None, description="the episode being recorded, as written so far; null when none")


class DigestsPublic(BaseModel):
    """The digest of each observation row of an episode: row 0 the reset's, row i the i-th step's
    (`platform_contracts.digests.observation_digest`, as the stream's `observation: "digest"`)."""

    observations: list[str]


class RecordingsPublic(BaseModel):
    data: list[RecordingSummaryPublic]
    count: int


class ArrayPublic(BaseModel):
    """One array of an episode: nested lists; non-finite floats as "nan"/"inf"/"-inf"; bytes
    (JPEG frames) as base64 strings, with `encoding` "base64"."""

    dtype: str = Field(description="NumPy dtype string, e.g. '<f8', '|b1', '|S1234'")
    shape: list[int]
    data: Any
    encoding: str | None = None


class ArrayShapePublic(BaseModel):
    dtype: str
    shape: list[int]


class EpisodePublic(BaseModel):
    """An episode: its summary from meta.json, its arrays' names and shapes, how many JPEG frames
    it has, and the arrays asked for with `?arrays=`. The open episode of a recording in progress
    is served as written so far (`in_progress`; its summary is what meta.json would list were it
    to end now)."""

    recording_id: str
    index: int
    episode: dict[str, Any]
    array_names: list[str]
    array_shapes: dict[str, ArrayShapePublic]
    frame_count: int
    arrays: dict[str, ArrayPublic] = Field(default_factory=dict)
    in_progress: bool = Field(False, description="the episode is still being recorded: what is written so far")
