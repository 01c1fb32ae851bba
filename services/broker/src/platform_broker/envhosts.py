"""Requests from the broker to env hosts (start, claim, stop, list), and closing a session on its host."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from platform_bus import BusUnavailableError
from platform_bus import request as bus_request
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2

from platform_contracts.log_lines import session_fields
from platform_broker.errors import UnavailableError
from platform_broker.session_endings import SessionEndings
from platform_broker.store import SessionStore

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = 10.0
LIST_TIMEOUT_S = 5.0
CLAIM_TIMEOUT_S = 10.0

ReplyT = TypeVar("ReplyT", bound=Message)  # the reply message a request is parsed into


class EnvHostClient:
    """NATS request/reply to the env hosts; every failure to get an answer is UnavailableError."""

    def __init__(self, nc: Any, start_timeout: float, stop_timeout: float = STOP_TIMEOUT_S,
                 list_timeout: float = LIST_TIMEOUT_S) -> None:
        self.nc = nc
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.list_timeout = list_timeout

    async def start(self, host_id: str, request: control_pb2.StartInstanceRequest) -> control_pb2.StartInstanceReply:
        return await self._request(host_id, "start", subjects.envhost_start(host_id), request,
                                   control_pb2.StartInstanceReply(), self.start_timeout)

    async def claim(self, host_id: str, request: control_pb2.ClaimInstanceRequest) -> control_pb2.ClaimInstanceReply:
        return await self._request(host_id, "claim", subjects.envhost_claim(host_id), request,
                                   control_pb2.ClaimInstanceReply(), CLAIM_TIMEOUT_S)

    async def stop(self, host_id: str, session_id: str, reason: str) -> control_pb2.StopInstanceReply:
        request = control_pb2.StopInstanceRequest(session_id=session_id, reason=reason)
        return await self._request(host_id, "stop", subjects.envhost_stop(host_id), request,
                                   control_pb2.StopInstanceReply(), self.stop_timeout)

    async def list(self, host_id: str) -> control_pb2.ListInstancesReply:
        return await self._request(host_id, "list", subjects.envhost_list(host_id),
                                   control_pb2.ListInstancesRequest(), control_pb2.ListInstancesReply(),
                                   self.list_timeout)

    async def _request(self, host_id: str, what: str, subject: str, request: Message, reply: ReplyT,
                       timeout: float) -> ReplyT:
        try:
            msg = await bus_request(self.nc, subject, request.SerializeToString(), timeout=timeout,
                                    service=f"env host '{host_id}'")
        except BusUnavailableError as exc:
            raise UnavailableError(str(exc)) from None
        try:
            reply.ParseFromString(msg.data)
        except DecodeError:
            raise UnavailableError(f"env host '{host_id}' sent a {what} reply that is not a "
                                   f"{type(reply).__name__}") from None
        return reply


async def stop_and_close(store: SessionStore, envhosts: EnvHostClient, endings: SessionEndings,
                         session: control_pb2.SessionInfo, reason: str) -> control_pb2.SessionInfo:
    """Stop the session's instance on its host (best effort) and mark it CLOSED with `reason`.

    A host that is gone or fails to stop it is logged, not raised: the session is closed either
    way, and an instance left behind is stopped as an orphan at the next reconcile. A host that
    stopped it publishes its CLOSED event; when none can (no answer, or the host does not have
    the instance: it restarted), the broker publishes it, so the recording is finished.
    """
    host_publishes = True
    if session.host_id:
        try:
            stopped = await envhosts.stop(session.host_id, session.id, reason)
            if stopped.error.code == "not_found":
                host_publishes = False
            elif stopped.error.code:
                log.warning("session %s (%s): env host %s failed to stop it: %s: %s", session.id,
                            session.options.env_id, session.host_id, stopped.error.code, stopped.error.message,
                            extra=session_fields(session.id, session.options.team))
        except UnavailableError as exc:
            log.warning("session %s (%s): %s; closing it anyway", session.id, session.options.env_id, exc, extra=session_fields(session.id, session.options.team))
            host_publishes = False
    if await store.mark_closed(session.id, reason):
        log.info("session %s (%s) closed: %s", session.id, session.options.env_id, reason, extra=session_fields(session.id, session.options.team))
        if not host_publishes:
            await endings.publish(session, events_pb2.SESSION_EVENT_KIND_CLOSED, reason)
    return await store.get(session.id) or session
