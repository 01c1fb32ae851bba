"""Counting a recorded session's steps and episodes, and building its bus events."""

from __future__ import annotations

from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_envhost.publisher import Outgoing

MSG_ID = "Nats-Msg-Id"


class StepEventBuilder:
    """Numbers a recorded session's events and builds them from request/response pairs.

    `seq` counts step events from 1. A reset or a restore starts a new episode (the first
    one is episode 0) with `episode_step` 0; each step adds one to `episode_step`. Failed
    commands produce no event.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.seq = 0
        self.episode = -1
        self.episode_step = 0
        self._step_subject = subjects.session_steps(session_id)
        self._snapshot_subject = subjects.session_snapshots(session_id)

    def build(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse, now: float,
              headers: dict[str, str]) -> Outgoing | None:
        """The event for one answered request, or None (not recorded, or failed).

        Args:
            headers: trace context to carry; the Nats-Msg-Id is added to it.
        """
        if response.HasField("error"):
            return None
        kind = response.WhichOneof("result")
        if kind == "step":
            self.episode = max(self.episode, 0)  # < 0 only if an instance steps before any reset
            self.episode_step += 1
            event = self._event(now)
            transition = event.step
            transition.action.CopyFrom(request.step.action)
            transition.result.CopyFrom(response.step)
            if request.step.HasField("agent"):
                transition.agent.CopyFrom(request.step.agent)
        elif kind == "reset" or kind == "restore":
            self.episode += 1
            self.episode_step = 0
            event = self._event(now)
            if kind == "reset":
                event.reset.CopyFrom(response.reset)
            else:
                event.restore.CopyFrom(response.restore)
        elif kind == "snapshot":
            snapshot = bus_pb.SnapshotEvent(session_id=self.session_id, handle=response.snapshot.handle,
                                            seq=self.seq, time=now)
            headers[MSG_ID] = f"{self.session_id}:snapshot:{response.snapshot.handle}"
            return Outgoing(self._snapshot_subject, snapshot.SerializeToString(), headers)
        else:
            return None
        headers[MSG_ID] = subjects.step_msg_id(self.session_id, event.seq)
        return Outgoing(self._step_subject, event.SerializeToString(), headers)

    def _event(self, now: float) -> bus_pb.StepEvent:
        self.seq += 1
        return bus_pb.StepEvent(session_id=self.session_id, seq=self.seq, episode=self.episode,
                                episode_step=self.episode_step, time=now)
