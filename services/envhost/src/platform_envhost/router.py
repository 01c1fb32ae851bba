"""The step path: `simulusion.env.v1.Environment/Connect` served by the env host.

Each stream names its session with the `session-id` metadata key. Request bytes go to the
session's instance unchanged and the response bytes come back unchanged; a request is parsed
(cheaply) only to learn its id and command. Changes are made by appending bytes (protobuf
merges them): `render_later` for sessions that record frames (`later_frames`: the frame comes
with the next answer, encoded after this one went out), `keep_steps` for recorded holds, and
the warnings about agent data that breaks a rule (`agent_data`), appended to the response.
A session with a world-change timeline has each reset, step, hold and batch answer checked for
a `ForRecording`, which is taken out before the answer goes back (`for_recording`) and kept in
its step events; the changes applied are logged (`world_change_log`), and WorldChangesRequest
is answered from that log.

For a recorded session the response of a reset, step, restore, snapshot or hold is then parsed
too and turned into events for the publisher, after the answer is sent (`finish`,
`deferred_events`); those of resets, steps and restores gather into StepEventBatch messages
(`coalesced_steps`), holds are recorded by `holds`; batch requests of vector
sessions are answered by `batches`, save_snapshot and restore_saved by `saved_snapshots`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from typing import Any, Protocol

import grpc
from google.protobuf.message import DecodeError
from opentelemetry import trace
from opentelemetry.context import Context
from platform_contracts import subjects, trace_setup
from platform_contracts.tracing import extract_dict, inject_dict
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_envhost.agent_data import check_agent_data, with_warnings
from platform_envhost.batches import BatchAnswerer
from platform_envhost.coalesced_steps import SEND_AFTER_S
from platform_envhost.deferred_events import DeferredEvents, frame_follows, parse_answers, take_owed_frames
from platform_envhost.errors import EventsNotStored, InstanceGone
from platform_envhost.event_batches import batch_messages
from platform_envhost.for_recording import CARRIERS, applied_changes, for_the_client
from platform_envhost.holds import recorded_hold
from platform_envhost.instance_table import InstanceTable
from platform_envhost.later_frames import RENDER, FrameDue, asks_render_later
from platform_envhost.metrics import VECTOR_PATH
from platform_envhost.publisher import EventPublisher, Outgoing
from platform_envhost.saved_snapshots import RECORDER_TIMEOUT_S, SAVED_COMMANDS, SavedSnapshots
from platform_envhost.session_instance import Instance, State

log = logging.getLogger(__name__)

SERVICE_NAME = "simulusion.env.v1.Environment"
# The longest a dead instance's 410 waits for its CRASHED event to be stored (JetStream down: not longer).
CRASH_STORED_WAIT_S = 2.0
# The longest a durable session's answer waits for its events to be stored.
DURABLE_STORE_TIMEOUT_S = 30.0
RECORDED_COMMANDS = frozenset({"reset", "step", "restore", "snapshot", "hold"})
# Recorded commands whose answers become events after they are sent (`DeferredEvents`): their
# answers are read, so the frames they carry for earlier requests arrive.
DEFERRED_COMMANDS = RECORDED_COMMANDS - {"hold"}


class StepClock(Protocol):
    """Where each step's time goes (the step-time histogram: `platform_bus.metrics_registry.FoldedHistogram`)."""

    def took(self, path: str, seconds: float) -> None: ...


def _error(request_id: int, code: env_pb.ErrorCode.ValueType, message: str) -> bytes:
    return env_pb.EnvResponse(id=request_id, error=env_pb.Error(code=code, message=message)).SerializeToString()


class Router:
    """Routes each session's requests to its instance, one at a time per instance.

    Args:
        publisher: publishes the events of recorded sessions; its NATS client also reaches
            the recorder (saved snapshots).
        recorder_timeout: seconds to wait for the recorder's answer to a saved snapshot request.
    """

    def __init__(self, table: InstanceTable, publisher: EventPublisher, host_id: str,
                 tracer: trace.Tracer | None = None, *, recorder_timeout: float = RECORDER_TIMEOUT_S,
                 step_clock: StepClock | None = None) -> None:
        self._table = table
        self._clock = step_clock
        self._publisher = publisher
        self._host_id = host_id
        self._tracer = tracer or trace.get_tracer(__name__)
        # Untraced requests: the share that get a trace of their own (OTEL_TRACES_SAMPLER; 0 by
        # default, and then a request without a trace context costs one test of a float).
        setup = trace_setup.current()
        self._root_ratio = setup.step_root_ratio if setup is not None else 0.0
        self._sample_root = setup.sample_step_root if setup is not None else (lambda: False)
        self._root_tracer = setup.step_root_tracer if setup is not None else self._tracer
        self._saved = SavedSnapshots(publisher.nc, recorder_timeout)
        self._batches = BatchAnswerer(self._saved, self._publish, lambda: publisher.max_payload)
        self._sending: set[asyncio.Task[None]] = set()  # timed sends of gathered step events

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler to add to a grpc.aio server (bytes in, bytes out)."""
        method: grpc.RpcMethodHandler[bytes, bytes] = grpc.stream_stream_rpc_method_handler(
            self.connect, request_deserializer=None, response_serializer=None
        )
        return grpc.method_handlers_generic_handler(SERVICE_NAME, {"Connect": method})

    async def connect(self, request_iterator: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        session_id = ""
        for key, value in context.invocation_metadata() or ():
            if key == subjects.SESSION_ID_METADATA:
                session_id = value if isinstance(value, str) else value.decode()
                break
        read, write, handle, finish = context.read, context.write, self.handle, self.finish
        while True:
            raw = await read()
            if raw is grpc.aio.EOF:
                return
            try:
                await write(await handle(session_id, raw))
            finally:  # answered, even if the client has gone: its events are still recorded
                await finish(session_id)

    async def finish(self, session_id: str) -> None:
        """See that the step events of the session's requests answered so far get built and queued.

        Callers send each answer first and call this after. The events are built in the order
        the requests were answered (`Instance.deferred_events`), up to the first one whose frame
        is still to come, while the instance works on the session's next request (the
        instance's `meanwhile`: `build_while_forwarding`), so building them costs the stepping
        client nothing; a timer builds and sends them when no request comes
        (`coalesced_steps.SEND_AFTER_S`). Resets and steps gather into a StepEventBatch sent
        when full or at that timer; a full publisher backlog makes the next request wait.
        """
        instance = self._table.get(session_id)
        if instance is not None and instance.deferred_events:
            if instance.meanwhile is None:
                instance.meanwhile = functools.partial(self.build_while_forwarding, instance)
            coalesced = instance.coalesced
            if coalesced.timer is None:
                coalesced.timer = asyncio.get_running_loop().call_later(SEND_AFTER_S, self._send_later, instance)

    async def build_while_forwarding(self, instance: Instance) -> None:
        """Build the deferred events (and send a full batch) while the instance answers a
        request. Skipped while the events are being built elsewhere (the timer's send holds
        `events_lock`): they are not lost, only left for later. Never raises: a failure here
        must not cost the request its answer."""
        if not instance.deferred_events or instance.events_lock.locked():
            return
        try:
            async with instance.events_lock:
                await self._build_deferred(instance)
                if instance.coalesced.full():
                    await self._send_coalesced(instance)
        except Exception:  # a bug: log it, the timer's send tries again
            log.exception("building the step events of %s failed", instance.describe())

    async def drain(self, instance: Instance) -> None:
        """Publish every event of the instance's answered requests now, gathered ones included
        (before the session's other events: a hold, a batch, its CLOSED or CRASHED). Frames
        still to come are given up: callers take them first while the instance runs."""
        async with instance.events_lock:
            parse_answers(instance)
            if instance.later_frames.waiting():
                instance.later_frames.give_up(instance.describe(), f"the instance is {instance.state.name.lower()}")
            await self._build_deferred(instance)
            await self._send_coalesced(instance)

    async def _build_deferred(self, instance: Instance) -> None:
        """Build the deferred events in order (`events_lock` held), up to the first that waits
        for its frame: a builder gathers its events in `instance.coalesced` or returns
        messages, which go after the gathered ones."""
        deferred = instance.deferred_events
        parse_answers(instance)
        while deferred:
            head = deferred[0]
            if isinstance(head, DeferredEvents) and not head.ready:
                return
            messages = deferred.pop(0)()
            if messages:
                await self._send_coalesced(instance)
                await self._publish(messages, instance.durable)

    async def _send_coalesced(self, instance: Instance) -> None:
        batch = instance.coalesced.take()
        if len(batch.events):
            await self._publish(batch_messages(batch, instance.records.batches, {}, self._publisher.max_payload),
                                instance.durable)

    def _send_later(self, instance: Instance) -> None:
        instance.coalesced.timer = None
        task = asyncio.create_task(self._send_due(instance), name=f"send-steps-{instance.session_id}")
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send_due(self, instance: Instance) -> None:
        """The timed send: the events built so far. When the client has gone quiet while the
        instance owes a frame, it is taken first (else the last step's events would wait for
        the client's next request); while events wait for frames the timer goes on."""
        if (instance.later_frames.owed and instance.state is State.RUNNING
                and time.time() - instance.last_active_at >= SEND_AFTER_S):
            async with instance.lock:
                if instance.state is State.RUNNING:
                    try:
                        await take_owed_frames(instance)
                    except InstanceGone as exc:
                        await self._table.broken(instance, str(exc))
        async with instance.events_lock:
            await self._build_deferred(instance)
            await self._send_coalesced(instance)
            coalesced = instance.coalesced
            if instance.deferred_events and instance.state is State.RUNNING and coalesced.timer is None:
                coalesced.timer = asyncio.get_running_loop().call_later(SEND_AFTER_S, self._send_later, instance)

    async def handle(self, session_id: str, raw: bytes, path: str = "gateway") -> bytes:
        """Answer one request of `session_id` (its bytes) that came on `path` ("direct" or
        "gateway": which step-time series a step counts in); always returns an EnvResponse's bytes.

        The step events of a recorded step or reset are built later, by `finish`.
        """
        try:
            request = env_pb.EnvRequest.FromString(raw)
        except DecodeError as exc:
            return _error(0, env_pb.ERROR_CODE_INVALID_ARGUMENT,
                          f"session {session_id}: the request is not an EnvRequest: {exc}")
        clock = self._clock
        if clock is None:
            return await self._handle(session_id, raw, request)
        command = request.WhichOneof("command")
        if command != "step" and command != "batch":
            return await self._handle(session_id, raw, request)
        started = time.perf_counter()
        answer = await self._handle(session_id, raw, request)
        clock.took(VECTOR_PATH if command == "batch" else path, time.perf_counter() - started)
        return answer

    async def _handle(self, session_id: str, raw: bytes, request: env_pb.EnvRequest) -> bytes:
        instance = self._table.get(session_id)
        if instance is None:
            if not session_id:
                message = f"no session: the stream has no {subjects.SESSION_ID_METADATA!r} metadata"
            else:
                message = f"session {session_id} is not running on env host {self._host_id}"
            return _error(request.id, env_pb.ERROR_CODE_NOT_FOUND, message)
        if instance.state is not State.RUNNING:
            return await self._not_running(instance, request.id)
        instance.last_active_at = time.time()
        if asks_render_later(request, instance.record_frames):
            raw += instance.later_frames.suffix(request.WhichOneof("command") or "")
            if instance.life_frames is not None:
                raw += instance.life_frames.take(self._publisher.nc)
        carrier = request.trace_context
        if carrier:
            ctx = extract_dict(carrier)
            if trace.get_current_span(ctx).get_span_context().is_valid:
                return await self._forward_traced(self._tracer, ctx, instance, request, raw)
        elif self._root_ratio and self._sample_root():  # a trace of its own starts here
            return await self._forward_traced(self._root_tracer, Context(), instance, request, raw)
        return await self._forward(instance, request, raw, None)

    async def _forward_traced(self, tracer: trace.Tracer, ctx: Context, instance: Instance,
                              request: env_pb.EnvRequest, raw: bytes) -> bytes:
        """`_forward` inside a span `envhost.<command>`, a child of `ctx`, whose context the
        instance and the step events get."""
        command = request.WhichOneof("command") or ""
        with tracer.start_as_current_span(
            f"envhost.{command}", context=ctx, kind=trace.SpanKind.SERVER,
            attributes={"session.id": instance.session_id, "env.id": instance.env_id},
        ):
            child = inject_dict()
            # Appended map entries override earlier ones: the instance sees our span as parent.
            raw += env_pb.EnvRequest(trace_context=child).SerializeToString()
            return await self._forward(instance, request, raw, child)

    async def _forward(self, instance: Instance, request: env_pb.EnvRequest, raw: bytes,
                       trace_headers: dict[str, str] | None) -> bytes:
        async with instance.lock:
            if instance.state is not State.RUNNING:
                return await self._not_running(instance, request.id)
            headers = dict(trace_headers if trace_headers is not None else request.trace_context)
            try:
                answer = await self._answer(instance, request, raw, headers)
                if instance.durable:
                    await self._store_answered(instance)
                return answer
            except InstanceGone as exc:
                if instance.state is State.RUNNING:
                    await self._table.broken(instance, str(exc))
                return await self._not_running(instance, request.id)
            except EventsNotStored as exc:
                return _error(request.id, env_pb.ERROR_CODE_UNAVAILABLE,
                              f"{instance.describe()}: the {request.WhichOneof('command')} was taken, but {exc}: "
                              "the session is durable, so it is not answered as kept")

    async def _store_answered(self, instance: Instance) -> None:
        """A durable session's events of what was just answered: built and stored now (their
        frame taken first), before the answer goes (`_publish` waits for JetStream)."""
        if instance.later_frames.owed:
            await take_owed_frames(instance)
        async with instance.events_lock:
            await self._build_deferred(instance)
            await self._send_coalesced(instance)

    async def _answer(self, instance: Instance, request: env_pb.EnvRequest, raw: bytes,
                      headers: dict[str, str]) -> bytes:
        """The response to one request (the instance's lock is held)."""
        command = request.WhichOneof("command")
        builder = instance.builder(0)
        deferred = builder is not None and command in DEFERRED_COMMANDS
        if instance.later_frames.owed and not deferred:
            await take_owed_frames(instance)  # this answer would carry the frame, unread
        if command == "hold" or command in SAVED_COMMANDS or command == "batch":
            await self.drain(instance)  # these publish at once: earlier events go first
        if command == "batch":
            answer, warnings = await self._batches.answer(instance, request, raw, headers)
            return with_warnings(answer, warnings)
        if command in SAVED_COMMANDS:
            return await self._saved_command(instance, request, headers)
        if command == "world_changes":
            await self.drain(instance)  # the events answered so far are built: their changes are logged
            return instance.world_changes.answer(request.id)
        agent, warnings = None, []
        if command == "step" or command == "hold":
            carrier = request.step if command == "step" else request.hold
            if carrier.HasField("agent"):
                agent, warnings = check_agent_data(carrier.agent, instance.agent_names(0))
        if builder is None or command not in RECORDED_COMMANDS:
            answer = await instance.forward(raw)
            if instance.has_timeline and command in CARRIERS:
                answer = self._unrecorded_changes(instance, answer)
        elif command == "hold":
            async def publish_batch(batch: bus_pb.StepEventBatch) -> None:
                await self._publish(batch_messages(batch, instance.records.batches, headers,
                                                   self._publisher.max_payload), instance.durable)

            answer = await recorded_hold(instance.forward, request, raw, builder, publish_batch,
                                         record_frames=instance.record_frames, agent=agent)
        else:
            later = instance.later_frames
            asked = asks_render_later(request, instance.record_frames) and later.supported is not False
            due = later.expect(request.id) if asked else None
            answer = await instance.forward(raw)
            later.owed = asked
            if asked and later.supported is None:
                await self._learn_render_later(instance, answer, due)
            client_answer, parsed = answer, None
            if instance.has_timeline and command in CARRIERS:  # the event keeps its ForRecording, the client's loses it
                client_answer, parsed = for_the_client(answer)
            instance.deferred_events.append(
                DeferredEvents(instance, builder, request, answer, headers, agent, time.time(), due,
                               parsed))
            answer = client_answer
        return with_warnings(answer, warnings)

    @staticmethod
    def _unrecorded_changes(instance: Instance, answer: bytes) -> bytes:
        """The answer of a session that is not recorded, without its ForRecording; the world
        changes it applied are logged (seq 0)."""
        client_answer, response = for_the_client(answer)
        if client_answer is not answer:
            instance.world_changes.add(applied_changes(response), 0, time.time())
        return client_answer

    async def _learn_render_later(self, instance: Instance, answer: bytes, due: FrameDue | None) -> None:
        """The first answer to `render_later` says whether the instance renders later. One that
        does not (an older SDK) gives this frame to a `render` request now (nothing has moved
        since) and is asked `render` from then on."""
        response = env_pb.EnvResponse.FromString(answer)
        if response.HasField("error") or response.WhichOneof("result") not in ("reset", "step"):
            return
        later = instance.later_frames
        later.supported = frame_follows(response)
        if later.supported or due is None:
            return
        later.owed = False
        log.info("%s renders no frames later (an older environment server): its frames come with its answers",
                 instance.describe())
        rendered = env_pb.EnvResponse.FromString(await instance.forward(RENDER))
        if rendered.WhichOneof("result") == "render":
            due.frame = rendered.render.frame
        due.settled = True

    async def _saved_command(self, instance: Instance, request: env_pb.EnvRequest,
                             headers: dict[str, str]) -> bytes:
        async def call(command: env_pb.EnvRequest) -> env_pb.EnvResponse:
            return env_pb.EnvResponse.FromString(await instance.forward(command.SerializeToString()))

        if request.WhichOneof("command") == "save_snapshot":
            return (await self._saved.save(instance, request, call)).SerializeToString()
        response = await self._saved.restore(instance, request, call)
        builder = instance.builder(0)
        if builder is not None:  # a restore event: the session goes on from the saved moment
            await self._publish(builder.build(request, response, time.time(), headers), instance.durable)
        return response.SerializeToString()

    async def _publish(self, messages: list[Outgoing], durable: bool = False) -> None:
        """Queue `messages` for JetStream, in order; `durable`: and wait until it has stored them
        (sent without the publisher's linger).

        Raises:
            EventsNotStored: durable, and they were not stored within DURABLE_STORE_TIMEOUT_S (or
                one can never be: over the NATS max payload).
        """
        publisher = self._publisher
        if durable:
            await self._publish_stored(messages)
            return
        for message in messages:
            if not publisher.submit_nowait(message):
                await publisher.submit(message)  # backlog full: this step waits

    async def _publish_stored(self, messages: list[Outgoing]) -> None:
        loop = asyncio.get_running_loop()
        stored: list[asyncio.Future[None]] = []
        for message in messages:
            message.done = loop.create_future()
            stored.append(message.done)
            await self._publisher.submit(message, urgent=True)
        try:
            await asyncio.wait_for(asyncio.gather(*stored), DURABLE_STORE_TIMEOUT_S)
        except TimeoutError:
            raise EventsNotStored(f"its step events were not stored in JetStream within {DURABLE_STORE_TIMEOUT_S:g} s "
                                  "(they stay queued until they are)") from None
        except ValueError as exc:  # the publisher could never publish one
            raise EventsNotStored(f"its step events cannot be stored: {exc}") from None

    async def _not_running(self, instance: Instance, request_id: int) -> bytes:
        if instance.state is State.DEAD:
            # after its CRASHED is stored (see Instance.crash_stored): 410, then "crashed" to all
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(instance.crash_stored.wait(), CRASH_STORED_WAIT_S)
            return instance.unavailable(request_id)
        return _error(request_id, env_pb.ERROR_CODE_SESSION_CLOSED,
                      f"session {instance.session_id} ({instance.env_id}) was closed")
