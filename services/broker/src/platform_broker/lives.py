"""Lives: a recorded session may append to a life, a named recording that goes on across
sessions and restarts. The broker checks a create's life settings and keeps one open session
per life (the session table's partial unique index on `life`); the recorder writes the life.
"""

from __future__ import annotations

from platform_contracts.limits import LIFE_NAME, LIFE_NAME_RULE
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2

from platform_broker.errors import FailedPreconditionError, InvalidArgumentError


def life_settings(request: control_pb2.CreateSessionRequest) -> events_pb2.LifeSettings | None:
    """The create's life settings, checked; None when it names no life.

    Raises:
        InvalidArgumentError: a bad name, a life without `record`, a vector session with a
            life, or frame settings without a life.
    """
    life = request.life
    if not life.name:
        if life.frame_every or life.max_frames:
            raise InvalidArgumentError("frame_every and max_frames thin the frames of a life: give the life a name")
        return None
    if not LIFE_NAME.match(life.name):
        raise InvalidArgumentError(f"life name {life.name!r} is not valid: use {LIFE_NAME_RULE}")
    if not request.record:
        raise InvalidArgumentError(f"life {life.name} is a recording: it needs record=true")
    if request.num_envs > 1:
        raise InvalidArgumentError(f"life {life.name} records one environment: a vector session "
                                   f"(num_envs={request.num_envs}) cannot append to it")
    return events_pb2.LifeSettings(name=life.name, frame_every=life.frame_every, max_frames=life.max_frames)


def records_frames(request: control_pb2.CreateSessionRequest, life: events_pb2.LifeSettings | None) -> bool:
    """Whether the session keeps frames: asked for, or implied by the life's frame thinning."""
    return request.record_frames or (life is not None and bool(life.frame_every or life.max_frames))


class LifeHeldError(FailedPreconditionError):
    """Another open session is recording the life."""

    def __init__(self, name: str, holder_session_id: str) -> None:
        super().__init__(f"life {name} is being recorded by session {holder_session_id}; close it first")
        self.name = name
        self.holder_session_id = holder_session_id
