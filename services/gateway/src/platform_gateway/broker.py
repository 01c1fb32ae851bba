"""The broker's request/reply API (protobuf messages of simulusion.control.v1) as async calls."""

from __future__ import annotations

from typing import TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.client import Client as NATS
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_gateway import nats_rpc
from platform_gateway.errors import UnavailableError, from_control_error

R = TypeVar("R", bound=Message)

# A close waits for the broker longer than the broker waits for the env host to stop the instance
# (platform_broker.envhosts.STOP_TIMEOUT_S, 10 s): an env host slow to stop never turns a close
# into a 503, since the broker closes the session either way once its wait is over.
CLOSE_TIMEOUT_S = 30.0


class BrokerClient:
    """Calls the broker over NATS; broker errors raise the matching `GatewayError`."""

    def __init__(self, nc: NATS, *, timeout: float = 10.0, create_timeout: float = 60.0,
                 close_timeout: float = CLOSE_TIMEOUT_S) -> None:
        self._nc = nc
        self._timeout = timeout
        self._create_timeout = create_timeout
        self._close_timeout = max(close_timeout, timeout)

    async def list_envs(self) -> list[ctl.CatalogEntry]:
        reply = await self._call(subjects.BROKER_LIST_ENVS, ctl.ListEnvsRequest(), ctl.ListEnvsReply)
        return list(reply.envs)

    async def create_session(self, options: SessionOptions) -> ctl.SessionInfo:
        """Start a session made with `options`; answers once its instance runs."""
        request = ctl.CreateSessionRequest(options=options)
        reply = await self._call(subjects.BROKER_CREATE_SESSION, request, ctl.SessionReply, self._create_timeout)
        return reply.session

    async def get_session(self, session_id: str) -> ctl.SessionInfo:
        request = ctl.GetSessionRequest(session_id=session_id)
        return (await self._call(subjects.BROKER_GET_SESSION, request, ctl.SessionReply)).session

    async def list_sessions(self, include_closed: bool = False, team: str | None = None) -> list[ctl.SessionInfo]:
        """The sessions (only `team`'s when given)."""
        request = ctl.ListSessionsRequest(include_closed=include_closed, team=team or "")
        reply = await self._call(subjects.BROKER_LIST_SESSIONS, request, ctl.ListSessionsReply)
        return list(reply.sessions)

    async def usage(self, team: str | None = None, since_day: str = "", until_day: str = "") -> list[ctl.UsageRow]:
        """Instance-hours per UTC day, team and env id (only `team`'s when given), from `since_day`
        to `until_day` (YYYY-MM-DD, both inclusive; empty: from the start, until today)."""
        request = ctl.UsageRequest(team=team or "", since_day=since_day, until_day=until_day)
        return list((await self._call(subjects.BROKER_USAGE, request, ctl.UsageReply)).rows)

    async def close_session(self, session_id: str, reason: str = "closed by the client") -> ctl.SessionInfo:
        request = ctl.CloseSessionRequest(session_id=session_id, reason=reason)
        reply = await self._call(subjects.BROKER_CLOSE_SESSION, request, ctl.SessionReply, self._close_timeout)
        return reply.session

    async def _call(self, subject: str, request: Message, reply_type: type[R], timeout: float | None = None) -> R:
        data = await nats_rpc.request(
            self._nc, subject, request.SerializeToString(), timeout=timeout or self._timeout, service="broker"
        )
        try:
            reply = reply_type.FromString(data)
        except DecodeError:
            raise UnavailableError(f"broker unavailable: unreadable reply on {subject}") from None
        if reply.HasField("error") and reply.error.code:  # type: ignore[attr-defined]
            error = reply.error  # type: ignore[attr-defined]
            raise from_control_error(error.code, error.message, error.field)
        return reply
