"""Sessions and the environment commands on them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_LABELS = (
    "names of the parts of the flat observation, {name: [start, stop]}, for environments that "
    "define get_observation_labels (null otherwise)"
)


class SessionBase(BaseModel):
    env_id: str = Field(min_length=1, description="a catalog id (see GET /v0/envs)", examples=["cartpole"])
    kwargs: dict[str, Any] = Field(default_factory=dict, description="keyword arguments for the environment")
    record: bool = Field(default=False, description="record every step of the session")


class SessionCreate(SessionBase):
    model_config = ConfigDict(extra="forbid")

    jpeg_quality: int | None = Field(
        default=None, ge=1, le=100, description="JPEG quality of the session's frames (default 90)"
    )
    record_frames: bool = Field(
        default=False, description="with record: keep the frame (JPEG) of every reset and step in the recording"
    )


class SessionPublic(SessionBase):
    id: str
    state: str = Field(description="starting, running, closed or crashed")
    created_at: float = Field(description="seconds since the epoch")
    last_active_at: float = Field(description="seconds since the epoch")
    observation_space: dict[str, Any] | None = None
    action_space: dict[str, Any] | None = None
    render_mode: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    observation_labels: dict[str, list[int]] | None = Field(default=None, description=_LABELS)
    host_id: str | None = None
    reason: str | None = Field(default=None, description="why the session closed or crashed")
    log_tail: str | None = Field(default=None, description="the instance's last log lines when it crashed")


class SessionsPublic(BaseModel):
    data: list[SessionPublic]
    count: int


class ResetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int | None = Field(default=None, description="seed of the environment's RNG")
    options: dict[str, Any] | None = None


class StepBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Any = Field(description="an element of the action space as JSON (an integer, nested lists, ...)")
    agent: dict[str, Any] | None = Field(default=None, description="data about the agent's decision, recorded")


class RestoreBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    handle: str = Field(min_length=1, description="a handle returned by /snapshot")


class ResetResult(BaseModel):
    observation: Any
    info: dict[str, Any]
    observation_labels: dict[str, list[int]] | None = Field(default=None, description=_LABELS)


class StepResult(BaseModel):
    observation: Any
    reward: float | str = Field(description='the reward ("inf", "-inf" or "nan" when not finite)')
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    observation_labels: dict[str, list[int]] | None = Field(default=None, description=_LABELS)


class SnapshotResult(BaseModel):
    handle: str


class ErrorPublic(BaseModel):
    detail: str
    code: str
    log_tail: str | None = None
