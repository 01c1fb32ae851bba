"""Sessions and the environment commands on them.

Request bodies are strict (`JsonBody`: `extra="forbid", strict=True`): a value of another JSON type than
the schema says (`"seed": false`, `"record": 1`) is a 422, as the OpenAPI document promises.
"""

from __future__ import annotations

from typing import Any

from platform_contracts import limits, names
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from platform_gateway.schemas.json_body import JsonBody
from platform_gateway.schemas.recordings import STORED_ID_PATTERN

_LABELS = (
    "names of the parts of the flat observation, {name: [start, stop]}, for environments that "
    "define get_observation_labels (null otherwise)"
)


_AGENT = (
    "data about the agent's decision, recorded: finite numbers, booleans (stored as 0/1) or lists of up to "
    f"{limits.MAX_AGENT_LIST_LENGTH} numbers; at most {limits.MAX_AGENT_NAMES_PER_STEP} names a step "
    f"({limits.MAX_AGENT_NAMES_PER_RECORDING} a recording), names of {limits.AGENT_NAME_CHARACTERS}; "
    "compute_s = wall time spent deciding, refused = 1 when the agent declined to answer"
)
_WARNINGS = "what was left out of the request without stopping it (e.g. agent data that broke a rule)"
_LIFE = (
    "with record: append the recording to this life, a named recording that goes on across sessions and "
    "restarts (each episode's life_start counts steps over the whole life); one open session at a time "
    "writes a life (409 naming the holder otherwise)"
)
LIFE_NAME_PATTERN = names.LIFE_NAME_PATTERN
RESTORE_S = (
    "wall time in seconds the environment took to restore, measured by the environment server (a Doom "
    "environment replays its episode: the longer the episode, the longer); null when the environment server "
    "does not say (an older one)"
)


class SessionBase(BaseModel):
    """The options a session is made with: each field is the field of the same name of the
    `simulusion.session.v1.SessionOptions` message (`kwargs` is its `kwargs_json`, less the
    platform's own kwargs, which have typed fields of their own: `platform_contracts.session_kwargs`),
    mapped by `platform_gateway.session_options`; a field that may be null is the message's zero
    when left out."""

    env_id: str = Field(min_length=1, description="a catalog id (see GET /v0/envs)", examples=["cartpole"])
    kwargs: dict[str, Any] = Field(
        default_factory=dict,
        description="keyword arguments for the environment: the options its entry lists (`GET /v0/envs`) and "
        "the platform's own (endless, world_changes; wad and doom_map on Doom); any other is a 422 naming "
        f"the listed ones, unless the entry has `free_kwargs`. At most {limits.MAX_KWARGS_JSON_BYTES >> 20} MiB "
        f"as JSON, and at most {limits.MAX_WORLD_CHANGES:,} entries in a world_changes timeline",
    )
    record: bool = Field(default=False, description="record every step of the session")
    jpeg_quality: int | None = Field(
        default=None, ge=limits.MIN_JPEG_QUALITY, le=limits.MAX_JPEG_QUALITY,
        description=f"JPEG quality of the session's frames (default {limits.DEFAULT_JPEG_QUALITY})",
    )
    record_frames: bool = Field(
        default=False, description="with record: keep the frame (JPEG) of every reset and step in the recording"
    )
    num_envs: int | None = Field(
        default=None, ge=1, le=limits.MAX_NUM_ENVS,
        description="a vector session of that many sub-environments, stepped together with batch requests "
        "on the stream (platform_sdk.make_vec)",
    )
    durable: bool = Field(
        default=False,
        description="with record: answer each step only once its step event is stored (JetStream), so no step "
        "you were answered for is lost if the env host dies; slower (PLATFORM_DURABLE_STEPS makes every recorded "
        "session durable)",
    )
    life: str | None = Field(default=None, pattern=LIFE_NAME_PATTERN, description=_LIFE, examples=["robot-1"])
    frame_every: int | None = Field(
        default=None, ge=1, le=2**32 - 1, description="with life: keep one frame in N (turns on record_frames)"
    )
    max_frames: int | None = Field(
        default=None, ge=1, le=2**32 - 1,
        description="with life: never keep more than M frames over the whole life; the spacing doubles each "
        "time a twentieth of M is used (turns on record_frames)",
    )
    closes_with_page: bool = Field(
        default=False,
        description="the session belongs to one page (the web app sets it): the platform closes it once no stream "
        "has been open on it for PLATFORM_PAGE_SESSION_GRACE_S seconds (60), unless it records or is kept "
        "(PUT /v0/sessions/{id}/keep)",
    )
    auto_reset: bool = Field(
        default=False,
        description="the client steps with auto_reset (platform_sdk.connect(auto_reset=True)); each step asks "
        "for it itself (StepBody.auto_reset, or on the stream)",
    )


class SessionCreate(SessionBase, JsonBody):

    @field_validator("kwargs")
    @classmethod
    def _kwargs_fit(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        if (problem := limits.kwargs_problem(kwargs)) is not None:
            raise ValueError(problem)
        return kwargs

    @model_validator(mode="after")
    def _life_settings_fit(self) -> SessionCreate:
        if self.life is not None and not self.record:
            raise ValueError(f"life {self.life} is a recording: set record to true")
        if self.life is None and (self.frame_every is not None or self.max_frames is not None):
            raise ValueError("frame_every and max_frames thin the frames of a life: give life a name")
        return self


class SessionPublic(SessionBase):
    id: str
    team: str = Field(default="default", description="the team that owns it (the caller's, set by the platform)")
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
    stream_full_since: float | None = Field(
        default=None,
        description="seconds since the epoch: since when the platform's event stream has been full "
        "(PLATFORM_JETSTREAM_MAX_BYTES; the recorder is that far behind, or stopped) for the env host of this "
        "session; its step events wait on that host, and once they fill its backlog its steps wait too, until "
        "the recorder catches up (nothing is lost). null: events flow",
    )


class SessionKeep(JsonBody):
    keep: bool = Field(
        description="true: the session stays open after its page's streams close (a closes_with_page session); "
        "false: it closes PLATFORM_PAGE_SESSION_GRACE_S seconds after its last stream closes"
    )


class PageLeft(BaseModel):
    closes_in_s: float | None = Field(
        description="seconds after its last stream closes that the session closes unless a stream opens again "
        "(PLATFORM_PAGE_LEFT_GRACE_S); null: it stays open (kept, or recording)"
    )


class SessionsPublic(BaseModel):
    data: list[SessionPublic]
    count: int


class ResetBody(JsonBody):

    # lt, not le: the OpenAPI document writes bounds as floats, which hold 2**63 exactly, not 2**63 - 1.
    seed: int | None = Field(
        default=None, ge=limits.MIN_SEED, lt=limits.MAX_SEED + 1,
        description=f"seed of the environment's RNG, {limits.MIN_SEED} to {limits.MAX_SEED:,} (2**63 - 1)",
    )
    options: dict[str, Any] | None = None


class StepBody(JsonBody):

    action: Any = Field(
        description="an element of the action space as JSON (an integer, nested lists, ...)", examples=[0]
    )
    agent: dict[str, Any] | None = Field(default=None, description=_AGENT)
    auto_reset: bool = Field(
        default=False,
        description="when the step ends the episode, reset at once: the answer's observation is the next "
        "episode's first and info holds final_obs and final_info",
    )


class HoldBody(JsonBody):
    """One action repeated; with frames (the default) for fewer steps (see `steps`)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"anyOf": [
        {"properties": {"frames": {"const": False}}, "required": ["frames"]},
        {"properties": {"steps": {"maximum": limits.MAX_HOLD_STEPS_WITH_FRAMES}}},
    ]})

    action: Any = Field(description="the action to repeat, as JSON for the action space", examples=[0])
    steps: int = Field(
        ge=1, le=limits.MAX_HOLD_STEPS,
        description=f"how many steps: at most {limits.MAX_HOLD_STEPS:,}, and at most "
        f"{limits.MAX_HOLD_STEPS_WITH_FRAMES} with frames (the default)",
    )
    frames: bool = Field(
        default=True,
        description=f"a JPEG frame after every step (then at most {limits.MAX_HOLD_STEPS_WITH_FRAMES} steps)",
    )
    agent: dict[str, Any] | None = Field(default=None, description=_AGENT + " (with the first step)")


class HoldResult(BaseModel):
    steps: int = Field(description="steps taken: fewer than asked when the episode ended")
    rewards: list[float | str]
    frames: list[str] = Field(description="base64 JPEG after every step (empty without frames)")
    observation: Any
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    warnings: list[str] = Field(default_factory=list, description=_WARNINGS)


class SaveSnapshotBody(JsonBody):

    label: str = Field(default="", max_length=names.MAX_LABEL_LENGTH, pattern=names.LABEL_PATTERN,
                       description=f"a name for the moment, e.g. 'before the swing': {names.LABEL_RULE}")


class RestoreSavedBody(JsonBody):

    id: str = Field(
        min_length=1, max_length=limits.MAX_STORED_ID_LENGTH, pattern=STORED_ID_PATTERN,
        description="a saved snapshot id (GET /v0/snapshots lists them)",
    )


class SavedSnapshotPublic(BaseModel):
    id: str
    label: str
    session_id: str
    env_id: str
    kwargs: dict[str, Any]
    created_at: float
    seq: int = Field(description="the session's last recorded step event when it was saved (0: unrecorded)")
    size_bytes: int


class SavedSnapshotsPublic(BaseModel):
    data: list[SavedSnapshotPublic]
    count: int


class RestoreBody(JsonBody):

    handle: str = Field(min_length=1, description="a handle returned by /snapshot")


class ResetResult(BaseModel):
    observation: Any
    info: dict[str, Any]
    observation_labels: dict[str, list[int]] | None = Field(default=None, description=_LABELS)


class RestoreResult(ResetResult):
    """The answer of restore and restore-saved."""

    restore_s: float | None = Field(default=None, description=RESTORE_S)


class StepResult(BaseModel):
    observation: Any
    reward: float | str = Field(description='the reward ("inf", "-inf" or "nan" when not finite)')
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    observation_labels: dict[str, list[int]] | None = Field(default=None, description=_LABELS)
    warnings: list[str] = Field(default_factory=list, description=_WARNINGS)


class SnapshotResult(BaseModel):
    handle: str


class WorldChangesPublic(BaseModel):
    """A running session's world changes: its timeline and those applied so far (the env host's
    log: restoring a snapshot does not shorten it, and a change met again is listed again)."""

    session_id: str
    timeline: list[dict[str, Any]] = Field(
        description="the session's `world_changes` kwarg: entries {at, change, ...fields, reveal?} "
        "(platform_contracts.world_changes lists the kinds and their fields)")
    applied: list[dict[str, Any]] = Field(
        description="each change as it was applied, oldest first: its timeline entry plus `index` (its place "
        "in the timeline), `session_step` (the session's steps before it), `seq` (the recorded step event "
        "that applied it; 0 when the session is not recorded), `time` (unix seconds) and, in a vector "
        "session, `env_index`")


class ErrorPublic(BaseModel):
    detail: str
    code: str
    log_tail: str | None = None
    field: str | None = Field(
        default=None,
        description='the request field at fault, when the error is about one: "kwargs.<name>" for a session '
        'kwarg, a body field by its name (e.g. "jpeg_quality", "life.frame_every")',
        examples=["kwargs.frameskip"],
    )


class StepTicketPublic(BaseModel):
    """What opens the session's step link on its env host directly (the direct path)."""

    session_id: str
    address: str = Field(description="the env host's step link, host:port (framed TCP: simulusion/host/v1/step_link.proto)",
                         examples=["10.0.0.7:41234"])
    ticket: str = Field(description="put in StepLinkOpen.ticket; only needed to open the link")
    expires_in_s: int = Field(description="seconds the ticket can still open a link")
