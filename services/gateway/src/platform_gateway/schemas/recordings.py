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


class RecordingSummaryPublic(BaseModel):
    """meta.json without its episode list, plus the episode count and the session's saved snapshots."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    session_id: str | None = None
    env_id: str | None = None
    status: str | None = None
    episode_count: int = 0
    saved_snapshots: list[SavedSnapshotRef] = Field(default_factory=list)


class RecordingPublic(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    session_id: str | None = None
    env_id: str | None = None


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
    """A finished episode: its summary from meta.json, its arrays' names and shapes, how many
    JPEG frames it has, and the arrays asked for with `?arrays=`."""

    recording_id: str
    index: int
    episode: dict[str, Any]
    array_names: list[str]
    array_shapes: dict[str, ArrayShapePublic]
    frame_count: int
    arrays: dict[str, ArrayPublic] = Field(default_factory=dict)
