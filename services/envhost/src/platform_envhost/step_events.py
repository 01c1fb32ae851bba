"""Counting a recorded session's steps and episodes, and building its bus events.

One `StepEventBuilder` numbers the events of one recording: a session, or one sub-environment
of a vector session (its events name the sub-session, `subjects.sub_session_id`, and go on the
parent session's subjects). Events are added to a repeated `StepEvent` field (a
`StepEventBatch`'s `events`), which is how both single events and batches are built without
copying.

A step that ended its episode and was reset in the same step (`StepResponse.auto_reset`: the
request asked for it, or the session is endless) becomes two events: the step as the
environment ended it (final observation, info and frame, the true terminated/truncated), then
a reset event starting the next episode with the new observation, info and frame.

Events keep the answers' `ForRecording` (the client's copies lose it: `for_recording`). An
auto-reset step's is in two parts, as the instance sends them: what the ending step applied and
its final true observation (`AutoReset.final_for_recording`) go with the step event, what the
reset applied and the new episode's true first observation (`StepResponse.for_recording`) with
the reset event. The world changes an event carries are logged with its seq
(`world_change_log`) as the event is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb

from platform_envhost.publisher import Outgoing
from platform_envhost.world_change_log import WorldChangeLog

MSG_ID = "Nats-Msg-Id"
EventList = Any  # a repeated StepEvent field (RepeatedCompositeFieldContainer[StepEvent])


class StepEventBuilder:
    """Numbers one recording's events and builds them from answered commands.

    `seq` counts step events from 1. A reset or a restore starts a new episode (the first
    one is episode 0) with `episode_step` 0; each step adds one to `episode_step`. Failed
    commands produce no event.

    Args:
        session_id: the id the events carry (a sub-session id for a sub-environment).
        subject_session_id: the session whose subjects carry them (default: `session_id`).
        world_changes: the session's log of applied world changes (None: not kept).
        env_index: the sub-environment the events are of (0 for a single environment).
        life: the session's life ('' for none): with the session, it decides the subjects' partition.
    """

    def __init__(self, session_id: str, subject_session_id: str | None = None,
                 world_changes: WorldChangeLog | None = None, env_index: int = 0, *, life: str = "") -> None:
        self.session_id = session_id
        self.world_changes = world_changes
        self.env_index = env_index
        self.seq = 0
        self.episode = -1
        self.episode_step = 0
        parent = subject_session_id or session_id
        self._step_subject = subjects.session_steps(parent, life)
        self._snapshot_subject = subjects.session_snapshots(parent, life)

    def build(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse, now: float,
              headers: dict[str, str], agent: values_pb.DataMap | None = None) -> list[Outgoing]:
        """The events of one answered request of a single environment (none when it failed or
        is not recorded), each its own message with its Nats-Msg-Id.

        Args:
            agent: the checked agent data to record with a step (`agent_data.check_agent_data`).
            headers: trace context to carry; each message gets a copy with its Nats-Msg-Id.
        """
        if response.HasField("error"):
            return []
        if response.WhichOneof("result") == "snapshot":
            return [self.snapshot_event(response.snapshot.handle, now, headers)]
        events = bus_pb.StepEventBatch().events
        self.add(events, request, response, now, agent)
        return [self.single(event, headers) for event in events]

    def add(self, events: EventList, request: env_pb.EnvRequest, response: env_pb.EnvResponse, now: float,
            agent: values_pb.DataMap | None = None) -> None:
        """Add the step events of one answered reset, step, restore, restore_saved or hold.

        A failed command, and any other command, adds nothing. A hold's steps come from
        `response.hold.kept`, with `agent` on its first step.
        """
        kind = response.WhichOneof("result")
        if kind is None or response.HasField("error"):
            return
        if kind == "step":
            self.add_step(events, request.step.action, response.step, now, agent)
        elif kind == "reset":
            self.add_reset(events, response.reset, now, request.reset)
        elif kind == "restore":
            self.add_restore(events, response.restore, now)
        elif kind == "restore_saved":
            self.add_restore(events, response.restore_saved, now)
        elif kind == "hold":
            self.add_hold(events, request.hold.action, response.hold.kept, now, agent)

    def add_step(self, events: EventList, action: values_pb.Value, result: env_pb.StepResponse, now: float,
                 agent: values_pb.DataMap | None = None) -> None:
        self.episode = max(self.episode, 0)  # < 0 only if an instance steps before any reset
        self.episode_step += 1
        self.seq += 1
        event = events.add(session_id=self.session_id, seq=self.seq, episode=self.episode,
                           episode_step=self.episode_step, time=now)
        transition = event.step
        transition.action.CopyFrom(action)
        recorded = transition.result
        recorded.CopyFrom(result)
        if agent is not None:
            transition.agent.CopyFrom(agent)
        if not result.HasField("auto_reset"):
            if result.HasField("for_recording") and result.for_recording.world_changes_json:
                self._log_changes(result.for_recording.world_changes_json, now)
            return
        # The step as the episode ended, then the reset that started the next one.
        ended = result.auto_reset
        recorded.ClearField("auto_reset")
        recorded.ClearField("for_recording")
        if ended.HasField("final_for_recording"):  # what the ending step applied, its true final observation
            recorded.for_recording.CopyFrom(ended.final_for_recording)
            if ended.final_for_recording.world_changes_json:
                self._log_changes(ended.final_for_recording.world_changes_json, now)
        recorded.observation.CopyFrom(ended.final_observation)
        recorded.info.CopyFrom(ended.final_info)
        recorded.terminated = ended.terminated
        recorded.truncated = ended.truncated
        if ended.HasField("final_frame"):
            recorded.frame.CopyFrom(ended.final_frame)
        else:
            recorded.ClearField("frame")
        self._start_episode()
        reset = events.add(session_id=self.session_id, seq=self.seq, episode=self.episode, episode_step=0,
                           time=now).reset
        reset.observation.CopyFrom(result.observation)
        reset.info.CopyFrom(result.info)
        if result.HasField("frame"):
            reset.frame.CopyFrom(result.frame)
        if result.HasField("for_recording"):  # what the reset applied, the new episode's true first observation
            reset.for_recording.CopyFrom(result.for_recording)
            if result.for_recording.world_changes_json:
                self._log_changes(result.for_recording.world_changes_json, now)

    def _log_changes(self, changes: Iterable[str], now: float) -> None:
        if self.world_changes is not None:
            self.world_changes.add(changes, self.seq, now, self.env_index)

    def add_reset(self, events: EventList, reset: env_pb.ResetResponse, now: float,
                  request: env_pb.ResetRequest | None = None) -> None:
        """A reset's event; with its `request`, the seed and options it asked for (`reset_seed`,
        `reset_options`: what a play back of the episode resets with)."""
        self._start_episode()
        event = events.add(session_id=self.session_id, seq=self.seq, episode=self.episode, episode_step=0,
                           time=now)
        event.reset.CopyFrom(reset)
        if reset.HasField("for_recording") and reset.for_recording.world_changes_json:
            self._log_changes(reset.for_recording.world_changes_json, now)
        if request is not None:
            if request.HasField("seed"):
                event.reset_seed = request.seed
            if request.options.fields:
                event.reset_options.CopyFrom(request.options)

    def add_restore(self, events: EventList, result: env_pb.RestoreResponse | env_pb.RestoreSavedResponse,
                    now: float) -> None:
        """A restore's (or restore_saved's) event: its observation, info and the instance's seconds."""
        self._start_episode()
        restore = events.add(session_id=self.session_id, seq=self.seq, episode=self.episode, episode_step=0,
                             time=now).restore
        restore.observation.CopyFrom(result.observation)
        restore.info.CopyFrom(result.info)
        if result.HasField("seconds"):
            restore.seconds = result.seconds

    def add_hold(self, events: EventList, action: values_pb.Value, kept: Any, now: float,
                 agent: values_pb.DataMap | None = None) -> None:
        """The steps of a hold (its `kept` StepResponses), `agent` with the first."""
        for result in kept:
            self.add_step(events, action, result, now, agent)
            agent = None

    def single(self, event: bus_pb.StepEvent, headers: dict[str, str]) -> Outgoing:
        """`event` as its own message on the session's step subject."""
        return Outgoing(self._step_subject, event.SerializeToString(),
                        {**headers, MSG_ID: subjects.step_msg_id(self.session_id, event.seq)})

    def snapshot_event(self, handle: str, now: float, headers: dict[str, str]) -> Outgoing:
        snapshot = bus_pb.SnapshotEvent(session_id=self.session_id, handle=handle, seq=self.seq, time=now)
        return Outgoing(self._snapshot_subject, snapshot.SerializeToString(),
                        {**headers, MSG_ID: f"{self.session_id}:snapshot:{handle}"})

    def _start_episode(self) -> None:
        self.episode += 1
        self.episode_step = 0
        self.seq += 1
