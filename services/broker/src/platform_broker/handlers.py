"""The broker's request handlers: sessions create/get/list/close, the env catalog, usage.

Every request gets a reply: a failure is a `ControlError` in it, never a missing answer.
Each request runs in its own task, so a slow start does not hold up the others.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from google.protobuf.message import DecodeError, Message
from opentelemetry import trace
from platform_bus import flush_queued
from platform_contracts import subjects, tracing
from platform_database.teams import TeamStore
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2

from platform_contracts.log_lines import session_fields
from platform_broker.catalog import Catalog
from platform_broker.envhosts import EnvHostClient, stop_and_close
from platform_contracts.teams import owning_team

from platform_broker.lives import LifeOfAnotherTeamError
from platform_broker.errors import BrokerError, NotFoundError, UnavailableError
from platform_broker.hosts import HostRegistry, HostState
from platform_broker.pools import PoolKeeper, takes_pooled
from platform_broker.session_endings import SessionEndings
from platform_broker.kwargs_check import check_kwargs
from platform_broker.session_options import checked_options
from platform_broker.store import ENDED_STATES, OPEN_STATES, RUNNING, STARTING, SessionStore
from platform_broker.usage import Usage, sessions_quota_error

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_broker")

DEFAULT_CLOSE_REASON = "closed by the user"


def new_session_id() -> str:
    return "s-" + secrets.token_hex(6)


class Handlers:
    """Answers the broker subjects (queue group `broker`) with protobuf replies."""

    def __init__(self, store: SessionStore, catalog: Catalog, hosts: HostRegistry, envhosts: EnvHostClient,
                 endings: SessionEndings, clock: Callable[[], float] = time.time, pools: PoolKeeper | None = None,
                 usage: Usage | None = None, durable_steps: bool = False) -> None:
        self.store = store
        self.durable_steps = durable_steps  # every recorded session durable (SessionOptions.durable)
        self.usage = usage if usage is not None else Usage(store, TeamStore(store.engine))  # and the quotas
        self.catalog = catalog
        self.hosts = hosts
        self.envhosts = envhosts
        self.endings = endings  # the CLOSED of a session whose env host is gone
        self.pools = pools
        self._clock = clock
        # Applies a running session's last lifecycle event if it ended it (LifecycleConsumer.catch_up),
        # so that a read right after a client got a 410 says "crashed"; None: the table as it is.
        self.catch_up: Callable[[str, str], Awaitable[bool]] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        # Told of every answered create (BrokerMetrics.created): its request and reply.
        self.on_create: Callable[[control_pb2.CreateSessionRequest, control_pb2.SessionReply], None] | None = None
        self._routes: dict[str, tuple[type[Message], type[Message], Callable[[Any], Awaitable[Message]]]] = {
            subjects.BROKER_CREATE_SESSION: (control_pb2.CreateSessionRequest, control_pb2.SessionReply,
                                             self.create_session),
            subjects.BROKER_GET_SESSION: (control_pb2.GetSessionRequest, control_pb2.SessionReply,
                                          self.get_session),
            subjects.BROKER_LIST_SESSIONS: (control_pb2.ListSessionsRequest, control_pb2.ListSessionsReply,
                                            self.list_sessions),
            subjects.BROKER_CLOSE_SESSION: (control_pb2.CloseSessionRequest, control_pb2.SessionReply,
                                            self.close_session),
            subjects.BROKER_LIST_ENVS: (control_pb2.ListEnvsRequest, control_pb2.ListEnvsReply, self.list_envs),
            subjects.BROKER_USAGE: (control_pb2.UsageRequest, control_pb2.UsageReply, self.usage_rows),
        }

    async def subscribe(self, nc: Any) -> list[Any]:
        """Subscribe every broker subject on `nc` in the broker queue group."""
        subs = []
        for subject in self._routes:
            async def on_msg(msg: Any, subject: str = subject) -> None:
                self._spawn(self._serve(subject, msg))

            subs.append(await nc.subscribe(subject, queue=subjects.BROKER_QUEUE, cb=on_msg))
        await flush_queued(nc)  # the server knows the subscriptions before the broker says it is ready
        return subs

    async def wait_idle(self, timeout: float) -> None:
        """Wait (up to `timeout` s) for the requests in flight, then cancel what is left."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _stop_quietly(self, session: control_pb2.SessionInfo, reason: str) -> None:
        try:
            await self.envhosts.stop(session.host_id, session.id, reason)
        except UnavailableError as exc:
            log.info("session %s (%s): %s", session.id, session.options.env_id, exc, extra=session_fields(session.id, session.options.team))

    async def _serve(self, subject: str, msg: Any) -> None:
        request_cls, reply_cls, handler = self._routes[subject]
        with tracer.start_as_current_span(f"broker {subject}", context=tracing.extract_dict(msg.headers)):
            request = request_cls()
            try:
                request.ParseFromString(msg.data)
                reply = await handler(request)
            except DecodeError:
                reply = reply_cls(error=control_pb2.ControlError(
                    code="invalid_argument", message=f"{subject}: the request is not a {request_cls.__name__}"))
            except BrokerError as exc:
                reply = reply_cls(error=control_pb2.ControlError(code=exc.code, message=exc.message, field=exc.field))
            except Exception as exc:
                log.exception("%s failed", subject)
                reply = reply_cls(error=control_pb2.ControlError(code="internal", message=f"{subject}: {exc!r}"))
        if subject == subjects.BROKER_CREATE_SESSION and self.on_create is not None:
            self.on_create(request, reply)  # type: ignore[arg-type]
        if msg.reply:
            try:
                await msg.respond(reply.SerializeToString())
            except Exception as exc:  # noqa: BLE001 - connection closing: nobody left to tell
                log.warning("%s: could not send the reply: %r", subject, exc)

    async def create_session(self, request: control_pb2.CreateSessionRequest) -> control_pb2.SessionReply:
        env_id = request.options.env_id
        entry = self.catalog.get(env_id)
        if entry is None:
            ids = self.catalog.ids()
            shown = ", ".join(ids[:12]) + (f", ... ({len(ids)} in all; GET /v0/envs lists them)" if len(ids) > 12 else "")
            raise NotFoundError(f"unknown environment '{env_id}'; known: {shown}")
        options, kwargs = checked_options(request.options)
        if self.durable_steps and options.record:
            options.durable = True  # the platform's default (PLATFORM_DURABLE_STEPS)
        check_kwargs(entry, kwargs, options)  # and fills in the timeline's parsed fields
        if options.life and not (await self.store.life_teams(options.life)) <= {owning_team(options.team)}:
            raise LifeOfAnotherTeamError(options.life)  # its recordings would join another team's life
        now = self._clock()
        # Refused here past its instance-hours; a preview (the gateway's) counts to no team.
        quota = None if options.preview else await self.usage.quota(options.team, now)
        max_open = quota.max_sessions if quota is not None else None
        if max_open is not None and await self.store.count_open(options.team) >= max_open:
            raise sessions_quota_error(options.team, max_open)  # the insert checks again, atomically
        session = control_pb2.SessionInfo(id=new_session_id(), options=options, state=STARTING, created_at=now,
                                          last_active_at=now)
        pools = self.pools
        slot = pools.take(env_id) if pools is not None and takes_pooled(options) else None
        pool_host = self.hosts.get(slot.host_id) if slot is not None else None
        if pools is not None and slot is not None and pool_host is not None:
            _place(session, pool_host)
            if not await self.store.insert_within(session, max_open):
                pools.put_back(slot)
                raise sessions_quota_error(options.team, max_open or 0)
            spec = await pools.claim(slot, session.id, options)
            if spec is not None:
                log.info("session %s (%s): warm instance %s on env host %s", session.id, env_id,
                         slot.slot_id, slot.host_id, extra=session_fields(session.id, session.options.team))
                return await self._running(session, spec)
            try:
                host = self._pick_host(env_id, entry.gpus)
            except UnavailableError as exc:
                await self.store.mark_closed(session.id, f"start failed: {exc}")
                raise
            _place(session, host)
            await self.store.move(session.id, host.host_id, host.address, host.step_address)
        else:
            host = self._pick_host(env_id, entry.gpus)
            _place(session, host)
            if not await self.store.insert_within(session, max_open):
                raise sessions_quota_error(options.team, max_open or 0)
        self.hosts.note_placed(host.host_id, session.id)
        start = control_pb2.StartInstanceRequest(session_id=session.id, entry=entry, options=options)
        log.info("session %s (%s): starting on env host %s", session.id, env_id, host.host_id, extra=session_fields(session.id, session.options.team))
        try:
            reply = await self.envhosts.start(host.host_id, start)
        except UnavailableError as exc:
            # Closed now; the stop (in case the instance comes up late) goes on in the background.
            await self.store.mark_closed(session.id, f"start failed: {exc}")
            self._spawn(self._stop_quietly(session, f"start failed: {exc}"))
            raise UnavailableError(f"session {session.id} ({env_id}): {exc}") from None
        if reply.error.code:
            reason = f"start failed: {reply.error.message or reply.error.code}"
            await self.store.mark_closed(session.id, reason)
            log.info("session %s (%s): %s", session.id, env_id, reason, extra=session_fields(session.id, session.options.team))
            return control_pb2.SessionReply(session=await self.store.get(session.id), error=reply.error)
        return await self._running(session, reply.spec)

    def _pick_host(self, env_id: str, gpus: int = 0) -> HostState:
        host = self.hosts.pick(gpus)
        if host is None:
            live = self.hosts.live()
            offering = [h for h in live if h.heartbeat.gpus >= gpus]
            if not live:
                detail = "no env host is live"
            elif not offering:
                detail = (f"it needs {gpus} GPU(s) and none of the {len(live)} live env hosts offers as many "
                          f"(PLATFORM_ENVHOST_GPUS)")
            else:
                detail = f"all {len(offering)} live env hosts{f' with {gpus} GPU(s)' if gpus else ''} are full"
            raise UnavailableError(f"no env host with free capacity for '{env_id}': {detail}")
        return host

    async def _running(self, session: control_pb2.SessionInfo,
                       spec: environment_pb2.SpecResponse) -> control_pb2.SessionReply:
        if not await self.store.mark_running(session.id, spec):
            current = await self.store.get(session.id) or session
            raise UnavailableError(f"session {session.id} ({session.options.env_id}) ended while starting: "
                                   f"{current.reason or 'unknown reason'}")
        log.info("session %s (%s): running on env host %s", session.id, session.options.env_id, session.host_id,
                 extra=session_fields(session.id, session.options.team))
        return control_pb2.SessionReply(session=await self.store.get(session.id))

    async def get_session(self, request: control_pb2.GetSessionRequest) -> control_pb2.SessionReply:
        session = await self._existing(request.session_id)
        if session.state == RUNNING and self.catch_up is not None and await self.catch_up(session.id, session.options.life):
            session = await self._existing(request.session_id)
        return control_pb2.SessionReply(session=self._with_host_state(session))

    async def list_sessions(self, request: control_pb2.ListSessionsRequest) -> control_pb2.ListSessionsReply:
        states = (*OPEN_STATES, *ENDED_STATES) if request.include_closed else OPEN_STATES
        listed = await self.store.list(states, request.team or None)
        sessions = [self._with_host_state(session) for session in listed]
        return control_pb2.ListSessionsReply(sessions=sessions)

    def _with_host_state(self, session: control_pb2.SessionInfo) -> control_pb2.SessionInfo:
        """An open session with what its live host's last heartbeat says: whether the sessions
        stream refuses that host's events for being full, and a missing step address (a row
        written before the column existed, or before its env host advertised a step link)."""
        if session.state not in OPEN_STATES:
            return session
        host = self.hosts.get(session.host_id)
        if host is None or host.address != session.host_address:
            return session
        if not session.step_address:
            session.step_address = host.step_address
        session.stream_full_since = host.heartbeat.stream_full_since
        return session

    async def close_session(self, request: control_pb2.CloseSessionRequest) -> control_pb2.SessionReply:
        session = await self._existing(request.session_id)
        if session.state in ENDED_STATES:
            return control_pb2.SessionReply(session=session)
        closed = await stop_and_close(self.store, self.envhosts, self.endings, session, request.reason or DEFAULT_CLOSE_REASON)
        return control_pb2.SessionReply(session=closed)

    async def list_envs(self, request: control_pb2.ListEnvsRequest) -> control_pb2.ListEnvsReply:
        return control_pb2.ListEnvsReply(envs=self.catalog.entries())

    async def usage_rows(self, request: control_pb2.UsageRequest) -> control_pb2.UsageReply:
        return control_pb2.UsageReply(rows=await self.usage.rows(request, self._clock()))

    async def _existing(self, session_id: str) -> control_pb2.SessionInfo:
        session = await self.store.get(session_id) if session_id else None
        if session is None:
            raise NotFoundError(f"unknown session '{session_id}'")
        return session


def _place(session: control_pb2.SessionInfo, host: HostState) -> None:
    session.host_id, session.host_address, session.step_address = host.host_id, host.address, host.step_address
