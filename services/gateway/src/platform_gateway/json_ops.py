"""The WebSocket stream's JSON text commands (`{"op": ..., ...}`), answered like REST."""

from __future__ import annotations

import base64
from typing import Any

from platform_gateway import json_views
from platform_gateway.env_commands import EnvCommands
from platform_gateway.errors import InvalidArgumentError

OPS = ("reset", "step", "hold", "snapshot", "restore", "save_snapshot", "restore_saved", "render")


async def run_json(commands: EnvCommands, session_id: str, message: dict[str, Any]) -> dict[str, Any]:
    """One text command; the answer's fields are those of the REST route of the same name."""
    op = message.get("op")
    where = f"session {session_id}, {op}"
    if op == "reset":
        seed = message.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InvalidArgumentError(f"{where}: seed must be an integer, not {seed!r}")
        return await commands.reset(session_id, seed, _object(message, "options", where))
    if op == "step":
        return await commands.step(session_id, _action(message, where), _object(message, "agent", where),
                                   _flag(message, "auto_reset", False, where))
    if op == "hold":
        return await commands.hold(session_id, _action(message, where), message.get("steps"),  # type: ignore[arg-type]
                                   _flag(message, "frames", True, where), _object(message, "agent", where))
    if op == "snapshot":
        return await commands.snapshot(session_id)
    if op == "restore":
        return await commands.restore(session_id, _text(message, "handle", where))
    if op == "save_snapshot":
        label = message.get("label", "")
        if not isinstance(label, str):
            raise InvalidArgumentError(f"{where}: \"label\" must be a string")
        return await commands.save_snapshot(session_id, label)
    if op == "restore_saved":
        return await commands.restore_saved(session_id, _text(message, "id", where))
    if op == "render":
        frame = await commands.render(session_id)
        data = json_views.frame_jpeg(frame)
        return {"mime": "image/jpeg", "width": frame.width, "height": frame.height,
                "data": base64.b64encode(data).decode()}
    raise InvalidArgumentError(f"session {session_id}: unknown op {op!r}; expected one of {', '.join(OPS)}")


def _action(message: dict[str, Any], where: str) -> Any:
    if "action" not in message:
        raise InvalidArgumentError(f"{where}: the message has no \"action\"")
    return message["action"]


def _object(message: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = message.get(key)
    if value is not None and not isinstance(value, dict):
        raise InvalidArgumentError(f"{where}: \"{key}\" must be an object")
    return value


def _flag(message: dict[str, Any], key: str, default: bool, where: str) -> bool:
    value = message.get(key, default)
    if not isinstance(value, bool):
        raise InvalidArgumentError(f"{where}: \"{key}\" must be true or false")
    return value


def _text(message: dict[str, Any], key: str, where: str) -> str:
    value = message.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"{where}: \"{key}\" must be a non-empty string")
    return value
