"""Catalog entries."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class EnvPublic(BaseModel):
    id: str = Field(description="the catalog id to pass as `env_id` when creating a session")
    description: str = ""
    gymnasium_id: str | None = None
    factory: str | None = Field(default=None, description='"module:function" building the environment')
    path: str | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict, description="the entry's default keyword arguments")
    preview: str = Field(
        description="URL of the entry's preview frame (JPEG), e.g. `/v0/envs/cartpole/preview`"
    )
    preview_cached: bool = Field(
        description="whether the preview is made already (else the first request for it starts a session)"
    )


class EnvsPublic(BaseModel):
    data: list[EnvPublic]
    count: int
