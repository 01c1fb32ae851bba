"""A stand-in instance that follows a world-change timeline, for the env host's own tests.

The instance side (the environment server's timeline wrapper, `platform_sdk.server`) is
another engineer's; this stand-in answers the way the protocol says it does
(environment.proto, `ForRecording`): each answer that applied changes carries them as JSON
(the entry, "index", "session_step"), and while a `sensor_offset` is in force the observation
the agent sees is offset and `true_observation` holds the one before it. The world is a counter:
its observation is `[session_step, episode_step]` (float64), an episode ends after
`episode_steps` steps; an entry is applied at the first reset or step once `at` steps were taken,
and an auto-reset step's ForRecording is in two parts (the ending step's in
`final_for_recording`, the reset's in `for_recording`). `ScriptedRouter` runs a real `Router` over such instances, in process,
with a publisher that keeps what it is given.

The cross-service test (tests/test_e2e_world_changes.py) covers the real environment server.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from platform_contracts import subjects
from platform_contracts.session_kwargs import lift
from platform_contracts.step_batches import parse_batch
from platform_envhost.instance_table import launch_spec
from platform_envhost.publisher import Outgoing
from platform_envhost.router import Router
from platform_envhost.session_instance import Instance
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb
from simulusion.session.v1.options_pb2 import SessionOptions


def observation(values: list[float]) -> values_pb.Value:
    array = np.asarray(values, dtype=np.float64)
    return values_pb.Value(tensor=values_pb.Tensor(dtype="float64", shape=list(array.shape), data=array.tobytes()))


def values_of(value: values_pb.Value) -> list[float]:
    return np.frombuffer(value.tensor.data, dtype=np.float64).tolist()


class CounterWorld:
    """One (sub-)environment following `timeline` (entries {"at", "change", ...}; `sensor_offset`
    with an "offset" number is the only kind that changes what the agent sees)."""

    def __init__(self, timeline: list[dict[str, Any]], episode_steps: int = 5) -> None:
        self.timeline = timeline
        self.episode_steps = episode_steps
        self.session_step = 0
        self.episode_step = 0
        self.offset = 0.0
        self.applied: set[int] = set()  # indexes of the entries applied

    def _true(self) -> list[float]:
        return [float(self.session_step), float(self.episode_step)]

    def _seen(self, for_recording: env_pb.ForRecording) -> values_pb.Value:
        true = self._true()
        if self.offset:
            for_recording.true_observation.CopyFrom(observation(true))
            return observation([v + self.offset for v in true])
        return observation(true)

    def _apply_due(self) -> list[dict[str, Any]]:
        """Apply the entries due by now (at the first reset or step once `at` steps were taken)."""
        applied = []
        for index, entry in enumerate(self.timeline):
            if entry["at"] <= self.session_step and index not in self.applied:
                self.applied.add(index)
                if entry["change"] == "sensor_offset":
                    self.offset = float(entry["offset"])
                applied.append({**entry, "index": index, "session_step": self.session_step})
        return applied

    def reset(self) -> env_pb.ResetResponse:
        applied = self._apply_due()
        self.episode_step = 0
        response = env_pb.ResetResponse()
        response.for_recording.world_changes_json.extend(json.dumps(entry) for entry in applied)
        response.observation.CopyFrom(self._seen(response.for_recording))
        if not response.for_recording.ListFields():
            response.ClearField("for_recording")
        return response

    def step(self, auto_reset: bool = False) -> env_pb.StepResponse:
        applied = self._apply_due()
        self.session_step += 1
        self.episode_step += 1
        response = env_pb.StepResponse(reward=1.0)
        response.for_recording.world_changes_json.extend(json.dumps(entry) for entry in applied)
        revealed = [entry for entry in applied if entry.get("reveal")]
        if revealed:
            response.info.fields["world_changes"].text = json.dumps(revealed)
        ended = self.episode_step >= self.episode_steps
        if ended and auto_reset:  # the step's ForRecording goes with the ending, the reset's with the answer
            final = response.auto_reset
            final.final_for_recording.CopyFrom(response.for_recording)
            final.final_observation.CopyFrom(self._seen(final.final_for_recording))
            final.terminated = True
            if not final.final_for_recording.ListFields():
                final.ClearField("final_for_recording")
            first = self.reset()
            response.observation.CopyFrom(first.observation)
            response.for_recording.Clear()
            if first.HasField("for_recording"):
                response.for_recording.CopyFrom(first.for_recording)
        else:
            response.observation.CopyFrom(self._seen(response.for_recording))
            response.terminated = ended
        if not response.for_recording.ListFields():
            response.ClearField("for_recording")
        return response

    def hold(self, hold: env_pb.HoldRequest) -> env_pb.HoldResponse:
        response = env_pb.HoldResponse()
        for _ in range(hold.steps):
            step = self.step()
            response.steps += 1
            response.rewards.append(step.reward)
            if hold.keep_steps:
                response.kept.add().CopyFrom(step)
            else:
                response.for_recording.world_changes_json.extend(step.for_recording.world_changes_json)
            response.observation.CopyFrom(step.observation)
            if step.for_recording.HasField("true_observation"):
                response.for_recording.true_observation.CopyFrom(step.for_recording.true_observation)
            else:
                response.for_recording.ClearField("true_observation")
            if step.terminated:
                response.terminated = True
                break
        if not response.for_recording.ListFields():
            response.ClearField("for_recording")
        return response


def answer(worlds: list[CounterWorld], request: env_pb.EnvRequest) -> env_pb.EnvResponse:
    """The stand-in's answer to one request."""
    command = request.WhichOneof("command")
    response = env_pb.EnvResponse(id=request.id)
    world = worlds[0]
    if command == "spec":
        response.spec.env_id = "counter"
        response.spec.num_envs = len(worlds) if len(worlds) > 1 else 0
    elif command == "reset":
        response.reset.CopyFrom(world.reset())
    elif command == "step":
        response.step.CopyFrom(world.step(request.step.auto_reset))
    elif command == "hold":
        response.hold.CopyFrom(world.hold(request.hold))
    elif command == "batch":
        for sub in request.batch.requests:
            response.batch.responses.add().CopyFrom(answer([worlds[sub.index]], sub.request))
    else:
        response.error.code = env_pb.ERROR_CODE_UNIMPLEMENTED
        response.error.message = f"the stand-in does not answer {command}"
    return response


class _Process:
    """What `Instance` reads of a process it is not going to talk to."""

    transport = "frames"
    address = "unix:/nonexistent/counter.sock"

    def log_tail(self, lines: int = 40) -> str:
        return ""


class ScriptedInstance(Instance):
    """An `Instance` whose requests are answered by `CounterWorld`s in process. `answers` keeps
    the bytes of each answer exactly as the stand-in sent it."""

    def __init__(self, session_id: str, kwargs: dict[str, Any], *, record: bool = False, num_envs: int = 1,
                 episode_steps: int = 5) -> None:
        options = SessionOptions(env_id="counter", record=record)
        own = dict(kwargs)
        lift(own, options)  # as the gateway does
        options.kwargs_json = json.dumps(own)
        spec = launch_spec(control_pb.CatalogEntry(id="counter", factory="counter:make"), options)
        timeline = spec.kwargs.get("world_changes", [])
        super().__init__(session_id, options, json.dumps(spec.kwargs), _Process(),  # type: ignore[arg-type]
                         timeline=timeline)
        self.worlds = [CounterWorld(timeline, episode_steps) for _ in range(num_envs)]
        self.answers: list[bytes] = []

    async def forward(self, request: bytes) -> bytes:
        if self.meanwhile is not None:
            await self.meanwhile()
        raw = answer(self.worlds, env_pb.EnvRequest.FromString(request)).SerializeToString()
        self.answers.append(raw)
        return raw


class _Table:
    def __init__(self) -> None:
        self.instances: dict[str, Instance] = {}

    def get(self, session_id: str) -> Instance | None:
        return self.instances.get(session_id)

    async def broken(self, instance: Instance, detail: str) -> None:
        raise AssertionError(f"{instance.describe()} broke: {detail}")


class _Publisher:
    """Keeps every message it is given."""

    nc = None
    max_payload = 1024 * 1024

    def __init__(self) -> None:
        self.messages: list[Outgoing] = []

    def submit_nowait(self, message: Outgoing) -> bool:
        self.messages.append(message)
        return True

    async def submit(self, message: Outgoing) -> None:
        self.messages.append(message)


class ScriptedRouter:
    """A real `Router` over `ScriptedInstance`s; requests in, parsed answers out."""

    def __init__(self) -> None:
        self.table = _Table()
        self.publisher = _Publisher()
        self.router = Router(self.table, self.publisher, "h1")  # type: ignore[arg-type]
        self._ids = 0

    async def close(self) -> None:
        """Cancel the timed sends still due (the test's event loop ends)."""
        for instance in self.table.instances.values():
            timer = instance.coalesced.timer
            if timer is not None:
                timer.cancel()
                instance.coalesced.timer = None

    async def add(self, instance: ScriptedInstance) -> ScriptedInstance:
        self.table.instances[instance.session_id] = instance
        await instance.request_spec()
        return instance

    async def raw(self, session_id: str, request: env_pb.EnvRequest) -> bytes:
        """The bytes the client gets for `request`."""
        self._ids += 1
        request.id = request.id or self._ids
        answered = await self.router.handle(session_id, request.SerializeToString())
        await self.router.finish(session_id)
        return answered

    async def ask(self, session_id: str, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        response = env_pb.EnvResponse.FromString(await self.raw(session_id, request))
        assert not response.HasField("error"), response.error.message
        return response

    async def world_changes(self, session_id: str) -> tuple[list[Any], list[dict[str, Any]]]:
        """The session's timeline and applied changes, as the env host answers them."""
        response = await self.ask(session_id, env_pb.EnvRequest(world_changes=env_pb.WorldChangesRequest()))
        changes = response.world_changes
        return json.loads(changes.timeline_json), [json.loads(text) for text in changes.applied_json]

    async def events(self, instance: ScriptedInstance) -> list[bus_pb.StepEvent]:
        """Every step event published for the session so far (its deferred ones built first)."""
        await self.router.drain(instance)
        events: list[bus_pb.StepEvent] = []
        for message in self.publisher.messages:
            if subjects.session_event_kind(message.subject) == "steps":
                events.extend(parse_batch(message.payload))
            elif subjects.session_event_kind(message.subject) == "step":
                events.append(bus_pb.StepEvent.FromString(message.payload))
        return events
