"""Lives: a recorded session may append to a life, a named recording that goes on across
sessions and restarts. The broker checks a create's life settings (its options' `life`,
`frame_every`, `max_frames`) and keeps one open session per life (the session table's partial
unique index on `life`); the recorder writes the life.
"""

from __future__ import annotations

from platform_contracts.names import LIFE_NAME, LIFE_NAME_RULE
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_broker.errors import FailedPreconditionError, InvalidArgumentError


def check_life(options: SessionOptions) -> None:
    """Check a create's life settings (`life`, `frame_every`, `max_frames`).

    Raises:
        InvalidArgumentError: a bad name, a life without `record`, a vector session with a
            life, or frame settings without a life.
    """
    if not options.life:
        if options.frame_every or options.max_frames:
            raise InvalidArgumentError("frame_every and max_frames thin the frames of a life: give the life a name",
                                       field="life")
        return
    if not LIFE_NAME.fullmatch(options.life):
        raise InvalidArgumentError(f"life name {options.life!r} is not valid: use {LIFE_NAME_RULE}", field="life")
    if not options.record:
        raise InvalidArgumentError(f"life {options.life} is a recording: it needs record=true", field="record")
    if options.num_envs > 1:
        raise InvalidArgumentError(f"life {options.life} records one environment: a vector session "
                                   f"(num_envs={options.num_envs}) cannot append to it", field="num_envs")


class LifeOfAnotherTeamError(FailedPreconditionError):
    """The life's sessions so far are another team's: a life is one team's (PLATFORM_MODE=managed)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the life name {name} is taken by another team: choose another name")


class LifeHeldError(FailedPreconditionError):
    """Another open session is recording the life."""

    def __init__(self, name: str, holder_session_id: str) -> None:
        super().__init__(f"life {name} is being recorded by session {holder_session_id}; close it first")
        self.name = name
        self.holder_session_id = holder_session_id
