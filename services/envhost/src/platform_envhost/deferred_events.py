"""The step events of an answered request, built after the answer is sent (`Router.finish`).

A reset, step, restore or snapshot of a recorded session is answered first; its answer is
parsed and turned into events afterwards, in the order the requests were answered
(`Instance.deferred_events`). Parsing an answer also takes the frames it carries for earlier
`render_later` requests (`later_frames`); the events of a request whose frame is still to come
wait for it (`ready`), and so do those after it, to keep the session's order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb

from platform_envhost.later_frames import TAKE_FRAMES, FrameDue

if TYPE_CHECKING:
    from platform_envhost.publisher import Outgoing
    from platform_envhost.session_instance import Instance
    from platform_envhost.step_events import StepEventBuilder


class DeferredEvents:
    """The events of one answered reset, step, restore or snapshot: a traced request's events
    are messages of their own (they carry its trace context), a snapshot's event goes on its own
    subject, the others gather in `instance.coalesced`."""

    __slots__ = ("agent", "answer", "builder", "due", "headers", "instance", "now", "parsed", "request", "response")

    def __init__(self, instance: Instance, builder: StepEventBuilder, request: env_pb.EnvRequest, answer: bytes,
                 headers: dict[str, str], agent: values_pb.DataMap | None, now: float,
                 due: FrameDue | None, parsed: env_pb.EnvResponse | None = None) -> None:
        self.instance = instance
        self.builder = builder
        self.request = request
        self.answer = answer
        self.headers = headers
        self.agent = agent
        self.now = now
        self.due = due  # the frame asked with render_later, when it was
        self.parsed = parsed  # `answer` parsed already (when the router had to look into it), else None
        self.response: env_pb.EnvResponse | None = None

    def parse(self) -> env_pb.EnvResponse:
        """The answer, parsed once: the frames it carries go to the requests they belong to."""
        response = self.response
        if response is None:
            parsed, self.parsed = self.parsed, None
            response = self.response = parsed if parsed is not None else env_pb.EnvResponse.FromString(self.answer)
            if response.later_frames:
                self.instance.later_frames.arrived(response.later_frames, self.instance.describe())
                response.ClearField("later_frames")
            due = self.due
            if due is not None and not frame_follows(response):
                due.settled = True  # an error, or an instance that renders at once: no frame comes
        return response

    @property
    def ready(self) -> bool:
        """Its events can be built: no frame of its is still to come."""
        return self.due is None or self.due.settled

    def __call__(self) -> list[Outgoing]:
        response = self.parse()
        if self.due is not None:
            _put_frames(response, self.due)
        if self.headers or self.request.WhichOneof("command") == "snapshot":
            return self.builder.build(self.request, response, self.now, self.headers, self.agent)
        coalesced = self.instance.coalesced
        self.builder.add(coalesced.events, self.request, response, self.now, self.agent)
        coalesced.answer_bytes += len(self.answer)
        return []


def parse_answers(instance: Instance) -> None:
    """Parse the answers of the instance's deferred events (their frames arrive)."""
    for deferred in instance.deferred_events:
        if isinstance(deferred, DeferredEvents):
            deferred.parse()


async def take_owed_frames(instance: Instance) -> None:
    """Ask the instance for the frame it still owes (`instance.lock` held). Afterwards no frame
    is owed: one that did not come is given up.

    Raises:
        InstanceGone: the instance died.
    """
    later = instance.later_frames
    if not later.owed:
        return
    later.owed = False
    answer = env_pb.EnvResponse.FromString(await instance.forward(TAKE_FRAMES))
    parse_answers(instance)  # frames that came with earlier answers first
    later.arrived(answer.later_frames, instance.describe())
    later.give_up(instance.describe(), answer.error.message if answer.HasField("error") else "not sent")


def frame_follows(response: env_pb.EnvResponse) -> bool:
    """The answer to a reset or step says its frame comes later (`frame_later`)."""
    command = response.WhichOneof("result")
    if command == "step":
        return response.step.frame_later
    if command == "reset":
        return response.reset.frame_later
    return False


def _put_frames(response: env_pb.EnvResponse, due: FrameDue) -> None:
    """Put the frames that came later where the answer would have had them."""
    command = response.WhichOneof("result")
    if command == "step":
        step = response.step
        step.frame_later = False
        if due.frame is not None:
            step.frame.CopyFrom(due.frame)
        if due.final_frame is not None and step.HasField("auto_reset"):
            step.auto_reset.final_frame.CopyFrom(due.final_frame)
    elif command == "reset":
        response.reset.frame_later = False
        if due.frame is not None:
            response.reset.frame.CopyFrom(due.frame)
