"""Batch requests: the sub-environments of a vector instance, answered together.

A `BatchRequest`'s sub-requests go to the instance in one request. Their agent data is checked
against each sub-environment's own recording (warnings name the sub-environment). In a
recorded session the responses become one `StepEventBatch` (split only when larger than a NATS
message may be) whose events name each sub-environment's sub-session
(`subjects.sub_session_id`), each with its own seq and episode counters; resets, steps
(auto-reset ones as a step and a reset), restores and holds are recorded as they are outside a
batch. When the session records frames, or has holds to record, the request is re-encoded with
`render` / `keep_steps` set, and kept steps the client did not ask for are removed from the
response. Sub-answers lose their `ForRecording` (the events keep it; `for_recording`).

save_snapshot and restore_saved are the env host's own commands: a batch holding any goes to
the instance one sub-request at a time, in order.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from platform_contracts.limits import MAX_HOLD_STEPS_WITH_FRAMES
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb

from platform_envhost import for_recording
from platform_envhost.agent_data import check_agent_data
from platform_envhost.event_batches import batch_messages
from platform_envhost.holds import strip_hold
from platform_envhost.publisher import Outgoing
from platform_envhost.saved_snapshots import SAVED_COMMANDS, SavedSnapshots
from platform_envhost.session_instance import Instance

Forward = Callable[[bytes], Awaitable[bytes]]
Publish = Callable[[list[Outgoing], bool], Awaitable[None]]  # (messages, durable: wait until stored)


class BatchAnswerer:
    """Answers the batch requests of one env host's sessions.

    Args:
        saved: answers save_snapshot and restore_saved sub-requests.
        publish: queues messages for JetStream, in order.
        max_payload: the largest message NATS takes (a callable: it is learnt on connecting).
    """

    def __init__(self, saved: SavedSnapshots, publish: Publish, max_payload: Callable[[], int]) -> None:
        self._saved = saved
        self._publish = publish
        self._max_payload = max_payload

    async def answer(self, instance: Instance, request: env_pb.EnvRequest, raw: bytes,
                     headers: dict[str, str]) -> tuple[bytes, list[str]]:
        """The response bytes of a batch request, and its warnings."""
        subs = request.batch.requests
        num_envs = instance.num_envs
        warnings: list[str] = []
        agents: dict[int, values_pb.DataMap | None] = {}
        special = False
        for position, sub in enumerate(subs):
            inner = sub.request
            command = inner.WhichOneof("command")
            if command in SAVED_COMMANDS:
                special = True
                continue
            if command == "step":
                carrier: env_pb.StepRequest | env_pb.HoldRequest = inner.step
            elif command == "hold":
                carrier = inner.hold
            else:
                continue
            if carrier.HasField("agent") and sub.index < num_envs:
                agent, broken = check_agent_data(carrier.agent, instance.agent_names(sub.index))
                agents[position] = agent
                warnings.extend(f"sub-environment {sub.index}: {line}" for line in broken)
        if special:
            return await self._one_by_one(instance, request, headers, agents), warnings
        return await self._together(instance, request, raw, headers, agents), warnings

    async def _together(self, instance: Instance, request: env_pb.EnvRequest, raw: bytes,
                        headers: dict[str, str], agents: dict[int, values_pb.DataMap | None],
                        defer: bool = True) -> bytes:
        """The batch in one request to the instance. With `defer`, its events are built after the
        answer is sent (`Instance.deferred_events`), else before this returns."""
        subs = request.batch.requests
        if not instance.record:
            answer = await instance.forward(raw)
            return unrecorded_changes(instance, subs, answer) if instance.has_timeline else answer
        added = ask_to_record(raw, subs, instance.record_frames)
        answer = await instance.forward(added.raw if added is not None else raw)
        now = time.time()
        if defer and (added is None or not added.strip):  # the answer goes back as it is: record it later
            if instance.has_timeline:  # ... but for its ForRecording, which only the events keep
                client_answer, response = for_recording.for_the_client(answer)
                instance.deferred_events.append(lambda: self._events(instance, subs, response, now, headers, agents))
                return client_answer
            instance.deferred_events.append(
                lambda: self._events(instance, subs, env_pb.EnvResponse.FromString(answer), now, headers, agents)
            )
            return answer
        response = env_pb.EnvResponse.FromString(answer)
        await self._publish(self._events(instance, subs, response, now, headers, agents), instance.durable)
        if response.HasField("error") or response.WhichOneof("result") != "batch":
            return answer
        carried = instance.has_timeline and for_recording.carries(response)
        if not carried and (added is None or not added.strip):
            return answer
        if carried:
            for_recording.strip(response)
        for position in added.strip if added is not None else ():
            asked = subs[position].request.hold
            strip_hold(response.batch.responses[position].hold, keep_steps=asked.keep_steps, frames=asked.frames)
        return response.SerializeToString()

    def _events(self, instance: Instance, subs: object, response: env_pb.EnvResponse, now: float,
                headers: dict[str, str], agents: dict[int, values_pb.DataMap | None]) -> list[Outgoing]:
        """The messages recording an answered batch: one StepEventBatch (split when too large
        for NATS) and the snapshot events."""
        if response.HasField("error") or response.WhichOneof("result") != "batch":
            return []
        records = instance.records
        num_envs = instance.num_envs
        batch = bus_pb.StepEventBatch()
        events = batch.events
        snapshots: list[Outgoing] = []
        for position, (sub, answered) in enumerate(zip(subs, response.batch.responses, strict=False)):  # type: ignore[call-overload]
            if sub.index >= num_envs:
                continue  # the instance answered it with an error
            builder = records.builder(sub.index)
            if answered.WhichOneof("result") == "snapshot" and not answered.HasField("error"):
                snapshots.append(builder.snapshot_event(answered.snapshot.handle, now, headers))
            else:
                builder.add(events, sub.request, answered, now, agents.get(position))
        return batch_messages(batch, records.batches, headers, self._max_payload()) + snapshots

    async def _one_by_one(self, instance: Instance, request: env_pb.EnvRequest, headers: dict[str, str],
                          agents: dict[int, values_pb.DataMap | None]) -> bytes:
        """Each sub-request on its own (a batch holding save_snapshot or restore_saved)."""
        combined = env_pb.EnvResponse(id=request.id)
        responses = combined.batch.responses
        for position, sub in enumerate(request.batch.requests):
            inner = sub.request
            if inner.WhichOneof("command") not in SAVED_COMMANDS:
                single = env_pb.EnvRequest(id=request.id, trace_context=request.trace_context)
                single.batch.requests.add().CopyFrom(sub)
                answer = env_pb.EnvResponse.FromString(
                    await self._together(instance, single, single.SerializeToString(), headers,
                                         {0: agents.get(position)}, defer=False))
                if answer.HasField("error"):
                    responses.add(id=inner.id, error=answer.error)
                else:
                    responses.add().CopyFrom(answer.batch.responses[0])
                continue
            if sub.index >= instance.num_envs:
                responses.add(id=inner.id, error=env_pb.Error(
                    code=env_pb.ERROR_CODE_INVALID_ARGUMENT,
                    message=f"sub-environment {sub.index} does not exist: the session has {instance.num_envs}"))
                continue
            answered = await self._saved_command(instance, inner, sub.index, headers)
            responses.add().CopyFrom(answered)
        return combined.SerializeToString()

    async def _saved_command(self, instance: Instance, inner: env_pb.EnvRequest, index: int,
                             headers: dict[str, str]) -> env_pb.EnvResponse:
        async def call(command: env_pb.EnvRequest) -> env_pb.EnvResponse:
            wrapped = env_pb.EnvRequest(id=command.id)
            wrapped.batch.requests.add(index=index).request.CopyFrom(command)
            answer = env_pb.EnvResponse.FromString(await instance.forward(wrapped.SerializeToString()))
            if answer.HasField("error") or not answer.batch.responses:
                return env_pb.EnvResponse(id=command.id, error=answer.error)
            return answer.batch.responses[0]

        if inner.WhichOneof("command") == "save_snapshot":
            return await self._saved.save(instance, inner, call, index)
        response = await self._saved.restore(instance, inner, call, index)
        builder = instance.builder(index)
        if builder is not None and not response.HasField("error"):
            batch = bus_pb.StepEventBatch()
            builder.add(batch.events, inner, response, time.time())
            await self._publish(batch_messages(batch, instance.records.batches, headers, self._max_payload()),
                                instance.durable)
        return response


def unrecorded_changes(instance: Instance, subs: object, answer: bytes) -> bytes:
    """The answer to a batch of a session that is not recorded, without its ForRecording; the
    world changes each sub-environment applied are logged (seq 0)."""
    client_answer, response = for_recording.for_the_client(answer)
    if client_answer is answer or response.WhichOneof("result") != "batch":
        return client_answer
    now = time.time()
    for sub, answered in zip(subs, response.batch.responses, strict=False):  # type: ignore[call-overload]
        instance.world_changes.add(for_recording.applied_changes(answered), 0, now, sub.index)
    return client_answer


class _Asked:
    """A batch request re-encoded to record it, and the positions of the holds whose response
    must lose what the env host asked for."""

    __slots__ = ("raw", "strip")

    def __init__(self, raw: bytes, strip: list[int]) -> None:
        self.raw = raw
        self.strip = strip


def ask_to_record(raw: bytes, subs: object, record_frames: bool) -> _Asked | None:
    """The request with frames (record_frames) and kept hold steps asked for; None when it
    already asks for everything that is recorded."""
    needed = False
    for sub in subs:  # type: ignore[attr-defined]
        command = sub.request.WhichOneof("command")
        if command == "hold" or (record_frames and command in ("step", "reset")
                                 and not getattr(sub.request, command).render):
            needed = True
            break
    if not needed:
        return None
    request = env_pb.EnvRequest.FromString(raw)  # with the trace context merged into it
    strip: list[int] = []
    for position, sub in enumerate(request.batch.requests):
        inner = sub.request
        command = inner.WhichOneof("command")
        if command == "hold":
            hold = inner.hold
            frames = record_frames and not hold.frames and hold.steps <= MAX_HOLD_STEPS_WITH_FRAMES
            if not hold.keep_steps or frames:
                strip.append(position)
            hold.keep_steps = True
            hold.frames = hold.frames or frames
        elif record_frames and command in ("step", "reset"):
            getattr(inner, command).render = True
    return _Asked(request.SerializeToString(), strip)

