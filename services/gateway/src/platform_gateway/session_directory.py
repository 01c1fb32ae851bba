"""Session info (env host address, spec) from the broker, cached while the session runs."""

from __future__ import annotations

from simulusion.control.v1 import control_pb2 as ctl

from platform_gateway.broker import BrokerClient
from platform_gateway.errors import (
    ConflictError,
    GatewayError,
    NotFoundError,
    SessionGoneError,
    SessionNotFoundError,
)

_MAX_CACHED = 10_000


def gone_error(info: ctl.SessionInfo) -> GatewayError | None:
    """The error to answer for a session that cannot take commands; None when it runs."""
    if info.state == ctl.SESSION_STATE_RUNNING:
        return None
    if info.state == ctl.SESSION_STATE_CLOSED:
        return SessionGoneError(f"session {info.id} is closed ({info.reason or 'no reason given'})")
    if info.state == ctl.SESSION_STATE_CRASHED:
        return SessionGoneError(
            f"session {info.id} ({info.options.env_id}) crashed ({info.reason or 'the instance died'})",
            log_tail=info.log_tail,
        )
    if info.state == ctl.SESSION_STATE_STARTING:
        return ConflictError(f"session {info.id} ({info.options.env_id}) is still starting")
    return ConflictError(f"session {info.id} ({info.options.env_id}) is in an unknown state ({info.state})")


class SessionDirectory:
    """Running sessions' `SessionInfo`, asked from the broker once and kept until forgotten."""

    def __init__(self, broker: BrokerClient) -> None:
        self._broker = broker
        self._cache: dict[str, ctl.SessionInfo] = {}

    async def running(self, session_id: str) -> ctl.SessionInfo:
        """The info of a running session.

        Raises:
            NotFoundError: the broker does not know the session.
            SessionGoneError: the session is closed or crashed.
            ConflictError: the session is still starting.
            UnavailableError: the broker does not answer.
        """
        info = self._cache.get(session_id)
        if info is not None:
            return info
        try:
            info = await self._broker.get_session(session_id)
        except NotFoundError as exc:
            raise SessionNotFoundError(exc.message) from None
        error = gone_error(info)
        if error is not None:
            raise error
        if len(self._cache) >= _MAX_CACHED:
            self._cache.pop(next(iter(self._cache)))
        self._cache[session_id] = info
        return info

    async def fresh(self, session_id: str) -> ctl.SessionInfo:
        """The broker's current info, whatever the state (the cache is dropped)."""
        self.forget(session_id)
        return await self._broker.get_session(session_id)

    def remember(self, info: ctl.SessionInfo) -> None:
        """Cache the info the broker just returned (e.g. on create)."""
        if info.state == ctl.SESSION_STATE_RUNNING:
            self._cache[info.id] = info
        else:
            self.forget(info.id)

    def forget(self, session_id: str) -> None:
        self._cache.pop(session_id, None)
