"""Recordings: their metadata is the recorder's `meta.json`, passed through as it is."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class RecordingPublic(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    session_id: str | None = None
    env_id: str | None = None


class RecordingsPublic(BaseModel):
    data: list[dict[str, Any]]
    count: int
