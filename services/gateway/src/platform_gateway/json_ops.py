"""The WebSocket stream's JSON text commands (`schemas.stream`), parsed and answered.

`parse_command` turns a text message into its command model (an `InvalidCommandError` naming
the field at fault otherwise); `run_command` runs it and gives the answer's `result` with the
JPEG bytes of the frame it announces, if any, to be sent as the next binary message.
"""

from __future__ import annotations

from typing import Any

import orjson
from platform_contracts.digests import observation_digest
from platform_contracts.values import json_from_datamap
from pydantic import TypeAdapter, ValidationError
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb

from platform_gateway import json_views
from platform_gateway.env_commands import EnvCommands, renders_frames
from platform_gateway.errors import InvalidArgumentError
from platform_gateway.schemas.stream import (
    COMMANDS,
    OPS,
    HoldCommand,
    ObservationMode,
    RenderCommand,
    ResetCommand,
    RestoreCommand,
    RestoreSavedCommand,
    SaveSnapshotCommand,
    SnapshotCommand,
    StepCommand,
    StreamCommand,
)

_COMMAND: TypeAdapter[Any] = TypeAdapter(StreamCommand)
_EXAMPLE = '{"id": 1, "op": "step", "action": 0}'
_MODELS = dict(zip(OPS, COMMANDS, strict=True))


class InvalidCommandError(InvalidArgumentError):
    """A text message that is not a command; `field` names the part at fault ("": the whole)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field or ""


def message_head(text: str) -> tuple[Any, Any, dict[str, Any]]:
    """(id, op, the message as an object) of a text message, for the answer to name it.

    Raises:
        InvalidCommandError: not JSON, or not a JSON object (id and op are then unknown).
    """
    try:
        message = orjson.loads(text)  # what the stream reads on every step: orjson's parser
    except orjson.JSONDecodeError as exc:
        raise InvalidCommandError(f"the message is not JSON ({exc}): send a command like {_EXAMPLE}") from None
    if not isinstance(message, dict):
        raise InvalidCommandError(f"a command is a JSON object like {_EXAMPLE}, not {type(message).__name__}")
    ident = message.get("id")
    op = message.get("op")
    return (ident if isinstance(ident, (int, str)) and not isinstance(ident, bool) else None,
            op if isinstance(op, str) else None, message)


def parse_command(message: dict[str, Any], session_id: str) -> Any:
    """The command model of a message (a JSON object).

    Raises:
        InvalidCommandError: an unknown op, or a field missing, unknown or of the wrong type
            (the first such field is named in `field`, e.g. "seed").
    """
    try:
        return _COMMAND.validate_python(message, strict=True)
    except ValidationError as exc:
        raise _invalid(exc, message, session_id) from None


def _invalid(exc: ValidationError, message: dict[str, Any], session_id: str) -> InvalidCommandError:
    errors = exc.errors()
    op = message.get("op")
    where = f"session {session_id}, {op if isinstance(op, str) else 'a command'}"
    first: dict[str, Any] = dict(errors[0]) if errors else {}
    if first.get("type") in ("union_tag_not_found", "union_tag_invalid"):
        said = "has no \"op\"" if "op" not in message else f"has the unknown op {op!r}"
        return InvalidCommandError(f"session {session_id}: the command {said}; expected one of {', '.join(OPS)}",
                                   "op")
    problems = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())][1:]  # [0] is the op (the union's tag)
        name = ".".join(loc) or "command"
        if error.get("type") == "extra_forbidden":
            problems.append(f"{name}: unknown field")
        elif error.get("type") == "missing":
            problems.append(f"{name}: required")
        else:
            problems.append(f"{name}: {error.get('msg', 'invalid')}{_described(op, loc)}")
    loc = [str(part) for part in first.get("loc", ())][1:]
    return InvalidCommandError(f"{where}: " + "; ".join(problems), ".".join(loc) or None)


def _described(op: Any, loc: list[str]) -> str:
    """" (<the field's description>)" of a command's top-level field, which says what it takes."""
    model = _MODELS.get(op) if isinstance(op, str) else None
    field = model.model_fields.get(loc[0]) if model is not None and len(loc) == 1 else None
    return f" ({field.description})" if field is not None and field.description else ""


async def run_command(commands: EnvCommands, session_id: str, command: Any) -> tuple[dict[str, Any], bytes | None]:
    """Run one command: (the answer's result, the JPEG its `frame` announces or None)."""
    if isinstance(command, ResetCommand):
        info, response = await commands.reset_response(session_id, command.seed, command.options, command.frame)
        return _observed(response.reset, info, command.observation, response.reset.frame)
    if isinstance(command, StepCommand):
        info, response = await commands.step_response(session_id, command.action, command.agent,
                                                      command.auto_reset, command.frame)
        return _stepped(response, info, command.observation)
    if isinstance(command, RestoreCommand):
        info, response = await commands.restore_response(session_id, command.handle)
        frame = await _render_after(commands, info, command.frame)
        return _restored(response.restore, info, command.observation, frame)
    if isinstance(command, RestoreSavedCommand):
        info, response = await commands.restore_saved_response(session_id, command.snapshot_id)
        frame = await _render_after(commands, info, command.frame)
        return _restored(response.restore_saved, info, command.observation, frame)
    if isinstance(command, RenderCommand):
        frame = await commands.render(session_id)
        jpeg = json_views.frame_jpeg(frame)
        return {"frame": _frame_json(frame, jpeg)}, jpeg
    if isinstance(command, HoldCommand):
        return await commands.hold(session_id, command.action, command.steps, command.frames, command.agent), None
    if isinstance(command, SnapshotCommand):
        return await commands.snapshot(session_id), None
    if isinstance(command, SaveSnapshotCommand):
        return await commands.save_snapshot(session_id, command.label), None
    raise InvalidArgumentError(f"session {session_id}: no handler for {type(command).__name__}")


async def _render_after(commands: EnvCommands, info: ctl.SessionInfo, asked: bool) -> env_pb.Frame | None:
    """The frame after a restore (whose request cannot ask for it), when asked and rendered."""
    if not asked or not renders_frames(info):
        return None
    return await commands.render(info.id)


def observation_fields(value: values_pb.Value, mode: ObservationMode) -> dict[str, Any]:
    """`observation` (JSON with "full", else null) and `observation_digest` (with "digest")."""
    if mode == "full":
        return {"observation": json_views.value_json(value), "observation_digest": None}
    if mode == "digest" and value.WhichOneof("kind"):
        return {"observation": None, "observation_digest": observation_digest(value)}
    return {"observation": None, "observation_digest": None}


def _observed(result: env_pb.ResetResponse | env_pb.RestoreResponse | env_pb.RestoreSavedResponse,
              info: ctl.SessionInfo, mode: ObservationMode,
              frame: env_pb.Frame | None) -> tuple[dict[str, Any], bytes | None]:
    jpeg = _jpeg(frame, result.observation)
    return {
        **observation_fields(result.observation, mode),
        "info": json_from_datamap(result.info),
        "observation_labels": json_views.labels_json(info.spec),
        "frame": _frame_json(frame, jpeg) if jpeg is not None and frame is not None else None,
    }, jpeg


def _restored(result: env_pb.RestoreResponse | env_pb.RestoreSavedResponse, info: ctl.SessionInfo,
              mode: ObservationMode, frame: env_pb.Frame | None) -> tuple[dict[str, Any], bytes | None]:
    observed, jpeg = _observed(result, info, mode, frame)
    observed["restore_s"] = json_views.restore_seconds(result)
    return observed, jpeg


def _stepped(response: env_pb.EnvResponse, info: ctl.SessionInfo,
             mode: ObservationMode) -> tuple[dict[str, Any], bytes | None]:
    step = response.step
    result = json_views.step_json(step, info.spec, final_obs=mode == "full", observation=False)
    result.update(observation_fields(step.observation, mode))
    frame = step.frame if step.HasField("frame") else None
    jpeg = _jpeg(frame, step.observation)
    result["frame"] = _frame_json(frame, jpeg) if jpeg is not None and frame is not None else None
    result["warnings"] = list(response.warnings)
    return result, jpeg


def _jpeg(frame: env_pb.Frame | None, observation: values_pb.Value) -> bytes | None:
    if frame is None or not frame.encoding:
        return None
    return json_views.frame_jpeg(frame, observation)


def _frame_json(frame: env_pb.Frame, jpeg: bytes) -> dict[str, Any]:
    return {"mime": "image/jpeg", "width": frame.width, "height": frame.height, "size": len(jpeg)}
