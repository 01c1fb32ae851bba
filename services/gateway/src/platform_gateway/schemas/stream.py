"""The JSON text messages of the session stream (`/v0/sessions/{id}/stream`), for browsers.

A client sends a `StreamCommand` (one model per `op`, told apart by `op`) and gets one
`StreamAnswer` back with the command's `id`: `{"id", "op", "result"}`, or `{"id", "op",
"error"}`. An answer whose `result.frame` is a `StreamFrame` is followed by exactly one binary
message: that frame's JPEG bytes (`size` of them). A browser never sends binary messages (those
are the SDK's protobuf requests), so every binary message it receives is the frame its last
answer announced.

The gateway parses incoming commands with these models (strict, like the REST bodies: a value
of another JSON type is refused, an unknown field too) and declares them all in its OpenAPI
document's `components.schemas` (`openapi_components`), so clients generate their types from it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from platform_contracts import limits, names
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import models_json_schema

from platform_gateway.schemas.json_body import JsonBody
from platform_gateway.schemas.recordings import STORED_ID_PATTERN
from platform_gateway.schemas.sessions import RESTORE_S, HoldResult, SavedSnapshotPublic, SnapshotResult

ObservationMode = Literal["full", "digest", "none"]
MessageId = int | str | None

_ID = "any JSON number or string, given back in the answer; null when left out"
_FRAME_ASK = ("also send the frame after the command: the answer's `result.frame` describes it and one binary "
              "message with its JPEG bytes follows the answer (`frame` null, and no binary message, for an "
              "environment that renders no frames)")
_OBSERVATION_ASK = ('"full": the observation as JSON; "digest": `observation` null and `observation_digest` '
                    'its hex SHA-256 (platform_contracts.digests, as GET .../episodes/{n}/digests); "none": '
                    "`observation` null (for large image observations shown as frames)")
_AGENT = "data about the agent's decision, recorded with the step (see POST /v0/sessions/{id}/step)"
_LABELS = "names of the parts of the flat observation, {name: [start, stop]} (null when the environment has none)"


class _Command(JsonBody):

    id: MessageId = Field(default=None, description=_ID)


class ResetCommand(_Command):
    """Start a new episode."""

    op: Literal["reset"]
    # lt, not le: the OpenAPI document writes bounds as floats, which hold 2**63 exactly, not 2**63 - 1.
    seed: int | None = Field(
        default=None, ge=limits.MIN_SEED, lt=limits.MAX_SEED + 1,
        description=f"seed of the environment's RNG, {limits.MIN_SEED} to {limits.MAX_SEED:,} (2**63 - 1)",
    )
    options: dict[str, Any] | None = Field(default=None, description="the environment's reset options")
    frame: bool = Field(default=False, description=_FRAME_ASK)
    observation: ObservationMode = Field(default="full", description=_OBSERVATION_ASK)


class StepCommand(_Command):
    """One step."""

    op: Literal["step"]
    action: Any = Field(description="an element of the action space as JSON (an integer, nested lists, ...)")
    agent: dict[str, Any] | None = Field(default=None, description=_AGENT)
    auto_reset: bool = Field(default=False, description="when the step ends the episode, reset at once")
    frame: bool = Field(default=False, description=_FRAME_ASK)
    observation: ObservationMode = Field(default="full", description=_OBSERVATION_ASK)


class HoldCommand(_Command):
    """One action repeated for up to `steps` steps (see POST /v0/sessions/{id}/hold)."""

    op: Literal["hold"]
    action: Any = Field(description="the action to repeat, as JSON for the action space")
    steps: int = Field(ge=1, le=limits.MAX_HOLD_STEPS, description="how many steps")
    frames: bool = Field(default=True, description="a base64 JPEG after every step (in the answer's `frames`)")
    agent: dict[str, Any] | None = Field(default=None, description=_AGENT + " (with the first step)")


class SnapshotCommand(_Command):
    """Keep the full state in the instance; the answer's handle restores it."""

    op: Literal["snapshot"]


class RestoreCommand(_Command):
    """Return to a snapshot taken in this session."""

    op: Literal["restore"]
    handle: str = Field(min_length=1, description="a handle from a snapshot answer")
    frame: bool = Field(default=False, description=_FRAME_ASK)
    observation: ObservationMode = Field(default="full", description=_OBSERVATION_ASK)


class SaveSnapshotCommand(_Command):
    """Keep the session's state durably (GET /v0/snapshots lists them)."""

    op: Literal["save_snapshot"]
    label: str = Field(default="", max_length=names.MAX_LABEL_LENGTH, pattern=names.LABEL_PATTERN,
                       description=f"a name for the moment: {names.LABEL_RULE}")


class RestoreSavedCommand(_Command):
    """Return to a saved snapshot of the same environment and arguments."""

    op: Literal["restore_saved"]
    snapshot_id: str = Field(
        min_length=1, max_length=limits.MAX_STORED_ID_LENGTH, pattern=STORED_ID_PATTERN,
        description="a saved snapshot's id (GET /v0/snapshots lists them)",
    )
    frame: bool = Field(default=False, description=_FRAME_ASK)
    observation: ObservationMode = Field(default="full", description=_OBSERVATION_ASK)


class RenderCommand(_Command):
    """The current frame: the answer describes it, one binary message with its JPEG follows."""

    op: Literal["render"]


StreamCommand = Annotated[
    ResetCommand | StepCommand | HoldCommand | SnapshotCommand | RestoreCommand | SaveSnapshotCommand
    | RestoreSavedCommand | RenderCommand,
    Field(discriminator="op"),
]
COMMANDS: tuple[type[_Command], ...] = (ResetCommand, StepCommand, HoldCommand, SnapshotCommand, RestoreCommand,
                                        SaveSnapshotCommand, RestoreSavedCommand, RenderCommand)
OPS = tuple(model.model_fields["op"].annotation.__args__[0] for model in COMMANDS)  # type: ignore[union-attr]


# Answers always hold every field: their schemas say so (`required`), for the generated types.
_ANSWER_CONFIG = ConfigDict(json_schema_serialization_defaults_required=True)


class StreamFrame(BaseModel):
    """A frame sent as the binary message right after the answer that holds this."""

    model_config = _ANSWER_CONFIG

    mime: Literal["image/jpeg"] = "image/jpeg"
    width: int
    height: int
    size: int = Field(description="bytes of the binary message that follows")


class _Observed(BaseModel):
    model_config = _ANSWER_CONFIG

    observation: Any = Field(description='the observation as JSON; null with "observation": "digest" or "none"')
    observation_digest: str | None = Field(default=None, description='with "observation": "digest": its hex SHA-256')
    info: dict[str, Any]
    observation_labels: dict[str, list[int]] | None = Field(default=None, description=_LABELS)
    frame: StreamFrame | None = Field(default=None, description="the frame asked with `frame: true`, else null")


class StreamResetResult(_Observed):
    """The answer of reset."""


class StreamRestoreResult(StreamResetResult):
    """The answer of restore and restore_saved."""

    restore_s: float | None = Field(default=None, description=RESTORE_S)


class StreamStepResult(_Observed):
    """A step's answer. After an auto-reset (or an endless restart) observation, info and frame are
    the new episode's first; info holds `final_obs` ("full" only) and `final_info`."""

    reward: float | str = Field(description='the reward ("inf", "-inf" or "nan" when not finite)')
    terminated: bool
    truncated: bool
    warnings: list[str] = Field(default_factory=list, description="what was left out of the request")


class StreamRenderResult(BaseModel):
    model_config = _ANSWER_CONFIG

    frame: StreamFrame


class StreamError(BaseModel):
    model_config = _ANSWER_CONFIG

    status: int = Field(description="the HTTP status the same error has over REST (422, 404, 409, 410, ...)")
    detail: str
    code: str
    field: str | None = Field(default=None, description="the command's field at fault (422), e.g. `seed`")
    log_tail: str | None = Field(default=None, description="the instance's last log lines when it crashed (410)")


class _Answer(BaseModel):
    model_config = _ANSWER_CONFIG

    id: MessageId = Field(description="the command's id")


class ResetAnswer(_Answer):
    op: Literal["reset"]
    result: StreamResetResult


class StepAnswer(_Answer):
    op: Literal["step"]
    result: StreamStepResult


class HoldAnswer(_Answer):
    op: Literal["hold"]
    result: HoldResult


class SnapshotAnswer(_Answer):
    op: Literal["snapshot"]
    result: SnapshotResult


class RestoreAnswer(_Answer):
    op: Literal["restore"]
    result: StreamRestoreResult


class SaveSnapshotAnswer(_Answer):
    op: Literal["save_snapshot"]
    result: SavedSnapshotPublic


class RestoreSavedAnswer(_Answer):
    op: Literal["restore_saved"]
    result: StreamRestoreResult


class RenderAnswer(_Answer):
    op: Literal["render"]
    result: StreamRenderResult


class StreamErrorAnswer(_Answer):
    """A command that failed. With status 410 (the session ended or its instance died) the socket
    then closes with code 4410."""

    op: str | None = Field(description="the command's op (null when the message had none)")
    error: StreamError


StreamAnswer = (ResetAnswer | StepAnswer | HoldAnswer | SnapshotAnswer | RestoreAnswer | SaveSnapshotAnswer
                | RestoreSavedAnswer | RenderAnswer | StreamErrorAnswer)
ANSWERS: tuple[type[BaseModel], ...] = (ResetAnswer, StepAnswer, HoldAnswer, SnapshotAnswer, RestoreAnswer,
                                        SaveSnapshotAnswer, RestoreSavedAnswer, RenderAnswer, StreamErrorAnswer)


class _Commands(BaseModel):
    """Holds the commands' union, so that it gets a name of its own in the OpenAPI document."""

    command: StreamCommand


class _Answers(BaseModel):
    answer: StreamAnswer


_REF = "#/components/schemas/{model}"
_UNIONS: dict[str, tuple[type[BaseModel], str, str]] = {
    "StreamCommand": (_Commands, "command", "A JSON text command of the session stream (`op` says which)"),
    "StreamAnswer": (_Answers, "answer", "The answer to one StreamCommand: `result` (by `op`) or `error`"),
}


def openapi_components() -> dict[str, Any]:
    """The JSON schemas of every stream message, by name, for the OpenAPI document's
    `components.schemas`: `StreamCommand` (one of the commands, by `op`), `StreamAnswer`,
    `StreamFrame`, each command and answer model and what they hold (commands as they are
    parsed, answers as they are sent). Always the same document, its names sorted."""
    _, top = models_json_schema([(_Commands, "validation"), (_Answers, "serialization")], ref_template=_REF)
    schemas: dict[str, Any] = dict(top.get("$defs", {}))
    for name, (holder, field, description) in _UNIONS.items():
        union = schemas.pop(holder.__name__)["properties"][field]
        schemas[name] = {**{k: v for k, v in union.items() if k != "title"}, "title": name, "description": description}
    return dict(sorted(schemas.items()))
