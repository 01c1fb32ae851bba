"""The env host's control plane on NATS: start, claim, stop and list instances; lifecycle events."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from google.protobuf.message import DecodeError
from nats.errors import Error as NatsError
from opentelemetry import trace
from platform_bus import BusUnavailableError, publish_to_stream, flush_queued
from platform_contracts import subjects
from platform_contracts.tracing import extract_dict, inject_dict
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb

from platform_contracts.log_lines import session_fields
from platform_envhost.errors import EnvHostError
from platform_envhost.instance_table import InstanceTable
from platform_envhost.lifecycle import instance_info, session_event
from platform_envhost.publisher import EventPublisher
from platform_envhost.session_instance import Instance, State

log = logging.getLogger(__name__)

STARTED_PUBLISH_TIMEOUT_S = 5.0
CLOSED_ACK_WAIT_S = 5.0
CRASH_ACK_WAIT_S = 2.0
STOPPED_REASON = "env host stopped"
SHUTDOWN_GRACE_S = 10.0


class EnvHostService:
    """Answers `platform.envhost.<host>.{start,claim,stop,list}` and publishes SessionEvents.

    STARTED is published (and acked) before a start is answered; CLOSED and CRASHED go through
    the publisher after `drain_events` has sent the session's step events still waiting to be
    built or gathered (`Router.drain`), so they follow them. A warm pool instance (a pooled
    start) is no session: it has no lifecycle events until a claim gives it one, and the claim
    publishes its STARTED.
    """

    def __init__(self, nc: Any, js: Any, host_id: str, table: InstanceTable, publisher: EventPublisher,
                 drain_events: Callable[[Instance], Awaitable[None]], tracer: trace.Tracer | None = None) -> None:
        self._nc = nc
        self._drain_events = drain_events
        self._js = js
        self.host_id = host_id
        self._table = table
        self._publisher = publisher
        self._tracer = tracer or trace.get_tracer(__name__)
        self._subscriptions: list[Any] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        handlers: dict[str, Callable[[Any], Coroutine[Any, Any, None]]] = {
            subjects.envhost_start(self.host_id): self._on_start,
            subjects.envhost_claim(self.host_id): self._on_claim,
            subjects.envhost_stop(self.host_id): self._on_stop,
            subjects.envhost_list(self.host_id): self._on_list,
        }
        for subject, handler in handlers.items():
            self._subscriptions.append(await self._nc.subscribe(subject, cb=self._concurrently(handler)))
        await flush_queued(self._nc)  # the server knows the subscriptions before the host says it serves

    async def on_crash(self, instance: Instance) -> None:
        """An instance died unasked: publish CRASHED with its log tail (after its step events),
        and return once JetStream has it (or after CRASH_ACK_WAIT_S: the event stays queued until
        it is stored). The instance table sets `instance.crash_stored` when this returns, so the
        session's clients are answered then."""
        await self._drain_events(instance)
        with self._tracer.start_as_current_span("envhost.crashed", attributes={"session.id": instance.session_id}):
            event = session_event(instance, bus_pb.SESSION_EVENT_KIND_CRASHED, self.host_id,
                                  trace_headers=inject_dict())
            event.done = stored = asyncio.get_running_loop().create_future()
            await self._publisher.submit(event, urgent=True)
        with contextlib.suppress(Exception):  # TimeoutError, or the publisher stopped
            await asyncio.wait_for(asyncio.shield(stored), CRASH_ACK_WAIT_S)

    async def end_sessions(self, reason: str) -> list[str]:
        """Stop every session's instance (not the warm pool's), each CLOSED with `reason` (stored
        once JetStream takes it); returns the session ids."""
        pooled = set(self._table.pooled())
        ids = [instance.session_id for instance in self._table.instances() if instance.session_id not in pooled]
        await asyncio.gather(*(self._stop(control_pb.StopInstanceRequest(session_id=sid, reason=reason))
                               for sid in ids))
        return ids

    async def shutdown(self) -> None:
        """Stop taking requests, stop every instance (CLOSED "env host stopped")."""
        for subscription in self._subscriptions:
            with contextlib.suppress(NatsError):  # the connection is already gone
                await subscription.unsubscribe()
        if self._tasks:  # let requests in flight finish (a start may take a while), within reason
            await asyncio.wait(list(self._tasks), timeout=SHUTDOWN_GRACE_S)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        pooled = set(self._table.pooled())
        for instance in await self._table.stop_all():
            if instance.state is State.STOPPED and instance.session_id not in pooled:
                await self._drain_events(instance)
                with self._tracer.start_as_current_span("envhost.shutdown",
                                                        attributes={"session.id": instance.session_id}):
                    await self._publisher.submit(session_event(instance, bus_pb.SESSION_EVENT_KIND_CLOSED,
                                                               self.host_id, reason=STOPPED_REASON,
                                                               trace_headers=inject_dict()))

    def _concurrently(
        self, handler: Callable[[Any], Coroutine[Any, Any, None]]
    ) -> Callable[[Any], Coroutine[Any, Any, None]]:
        # nats-py runs one subscription's callbacks one after another: a slow start must not
        # hold up the next request, so each gets its own task.
        async def callback(msg: Any) -> None:
            task = asyncio.create_task(handler(msg))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return callback

    async def _respond(self, msg: Any, reply: Any) -> None:
        if msg.reply:
            try:
                await msg.respond(reply.SerializeToString())
            except NatsError as exc:
                log.warning("could not answer %s: %s", msg.subject, exc)

    async def _on_start(self, msg: Any) -> None:
        try:
            request = control_pb.StartInstanceRequest.FromString(msg.data)
        except DecodeError as exc:
            await self._respond(msg, control_pb.StartInstanceReply(error=control_pb.ControlError(
                code="invalid_argument", message=f"not a StartInstanceRequest: {exc}")))
            return
        with self._tracer.start_as_current_span("envhost.start", context=extract_dict(msg.headers),
                                                attributes={"session.id": request.session_id,
                                                            "env.id": request.entry.id}):
            await self._respond(msg, await self._start(request))

    async def _start(self, request: control_pb.StartInstanceRequest) -> control_pb.StartInstanceReply:
        session_id = request.session_id
        if not session_id:
            return _start_error("invalid_argument", "StartInstanceRequest has no session_id")
        started_at = time.monotonic()
        what = "pool instance" if request.pooled else "session"
        try:
            instance, new = await self._table.start(session_id, request.entry, request.options, pooled=request.pooled)
        except EnvHostError as exc:
            log.warning("start of %s %s (%s) failed: %s", what, session_id, request.entry.id, exc,
                        extra=None if request.pooled else session_fields(session_id, request.options.team))
            return _start_error(exc.code, str(exc))
        if new and not self._table.is_pooled(session_id):
            error = await self._publish_started(instance)
            if error is not None:
                return control_pb.StartInstanceReply(error=error)
        if new:
            log.info("started %s %s (%s) in %.2fs, record=%s%s", what, session_id, instance.env_id,
                     time.monotonic() - started_at, instance.record,
                     f", life={instance.options.life}" if instance.options.life else "",
                     extra=None if request.pooled else session_fields(session_id, request.options.team))
        return control_pb.StartInstanceReply(spec=instance.spec)

    async def _publish_started(self, instance: Instance) -> control_pb.ControlError | None:
        """Publish the session's STARTED and wait for its ack; on failure stop the instance and
        return the error to answer."""
        event = session_event(instance, bus_pb.SESSION_EVENT_KIND_STARTED, self.host_id, trace_headers=inject_dict())
        try:
            await publish_to_stream(self._js, event.subject, event.payload, headers=event.headers,
                                    timeout=STARTED_PUBLISH_TIMEOUT_S)
        except BusUnavailableError as exc:
            await self._table.stop(instance.session_id)
            return control_pb.ControlError(code="unavailable", message=(
                f"{instance.describe()}: publishing its STARTED event failed: {exc}"))
        return None

    async def _on_claim(self, msg: Any) -> None:
        try:
            request = control_pb.ClaimInstanceRequest.FromString(msg.data)
        except DecodeError as exc:
            await self._respond(msg, control_pb.ClaimInstanceReply(error=control_pb.ControlError(
                code="invalid_argument", message=f"not a ClaimInstanceRequest: {exc}")))
            return
        with self._tracer.start_as_current_span("envhost.claim", context=extract_dict(msg.headers),
                                                attributes={"session.id": request.session_id,
                                                            "pool.slot": request.pool_slot}):
            await self._respond(msg, await self._claim(request))

    async def _claim(self, request: control_pb.ClaimInstanceRequest) -> control_pb.ClaimInstanceReply:
        """Give a warm pool instance to a session, then publish the session's STARTED."""
        if not request.pool_slot or not request.session_id:
            return control_pb.ClaimInstanceReply(error=control_pb.ControlError(
                code="invalid_argument", message="ClaimInstanceRequest needs a pool_slot and a session_id"))
        try:
            instance = await self._table.claim(request.pool_slot, request.session_id, request.options)
        except EnvHostError as exc:
            log.info("claim of %s for session %s failed: %s", request.pool_slot, request.session_id, exc,
                     extra=session_fields(request.session_id, request.options.team))
            return control_pb.ClaimInstanceReply(error=control_pb.ControlError(code=exc.code, message=str(exc)))
        error = await self._publish_started(instance)
        if error is not None:
            return control_pb.ClaimInstanceReply(error=error)
        log.info("session %s (%s) claimed pool instance %s (pid %d), record=%s", request.session_id,
                 instance.env_id, request.pool_slot, instance.process.pid, instance.record,
                 extra=session_fields(request.session_id, request.options.team))
        return control_pb.ClaimInstanceReply(spec=instance.spec)

    async def _on_stop(self, msg: Any) -> None:
        try:
            request = control_pb.StopInstanceRequest.FromString(msg.data)
        except DecodeError as exc:
            await self._respond(msg, control_pb.StopInstanceReply(error=control_pb.ControlError(
                code="invalid_argument", message=f"not a StopInstanceRequest: {exc}")))
            return
        with self._tracer.start_as_current_span("envhost.stop", context=extract_dict(msg.headers),
                                                attributes={"session.id": request.session_id}):
            await self._respond(msg, await self._stop(request))

    async def _stop(self, request: control_pb.StopInstanceRequest) -> control_pb.StopInstanceReply:
        pooled = self._table.is_pooled(request.session_id)
        instance = await self._table.stop(request.session_id)
        if instance is None:
            return control_pb.StopInstanceReply(stopped=False, error=control_pb.ControlError(
                code="not_found", message=f"session {request.session_id} is not running on env host {self.host_id}"))
        if pooled:  # no session: no CLOSED
            log.info("stopped pool instance %s (%s): %s", request.session_id, instance.env_id, request.reason)
        elif instance.state is State.STOPPED:  # a dead one was reported CRASHED already
            await self._drain_events(instance)
            event = session_event(instance, bus_pb.SESSION_EVENT_KIND_CLOSED, self.host_id,
                                  reason=request.reason or "stopped", trace_headers=inject_dict())
            event.done = asyncio.get_running_loop().create_future()
            await self._publisher.submit(event)
            try:  # answer once CLOSED is stored, unless JetStream is away (it is published later)
                await asyncio.wait_for(asyncio.shield(event.done), CLOSED_ACK_WAIT_S)
            except TimeoutError:
                log.warning("CLOSED of session %s not acked yet; answering the stop anyway", request.session_id)
            log.info("stopped session %s (%s): %s", instance.session_id, instance.env_id, request.reason,
                     extra=session_fields(instance.session_id, instance.options.team))
        return control_pb.StopInstanceReply(stopped=True)

    async def _on_list(self, msg: Any) -> None:
        reply = control_pb.ListInstancesReply(instances=self.instance_infos(with_log_tail=True))
        await self._respond(msg, reply)

    def instance_infos(self, *, with_log_tail: bool) -> list[control_pb.InstanceInfo]:
        """Every instance of this host, starting ones included (as alive)."""
        infos = [instance_info(i, with_log_tail=with_log_tail) for i in self._table.instances()]
        now = time.time()
        infos += [control_pb.InstanceInfo(session_id=sid, alive=True, last_active_at=now)
                  for sid in self._table.starting()]
        return infos


def _start_error(code: str, message: str) -> control_pb.StartInstanceReply:
    return control_pb.StartInstanceReply(error=control_pb.ControlError(code=code, message=message))
