"""Recorded holds: every step of a hold becomes a step event.

The env host asks the instance to keep the hold's steps (`keep_steps`, merged into the request
by appending bytes, as the router does with `render_later`), turns the kept steps into one
`StepEventBatch` (the agent data with the first step) and forwards the response without them
(unless the client asked for them itself), always without their `ForRecording` (kept in the
events). A session with `record_frames` also asks for a frame
after every step; they go into the events and back only when the client asked for frames.

A hold longer than `HOLD_CHUNK_STEPS` goes to the instance in chunks of that many steps, one
after another under the instance's lock (nobody else's request can come between them), each
chunk's steps published as they come; the client gets one HoldResponse adding them up. This
bounds the memory a long hold of large observations takes, and frames (at most
`MAX_HOLD_STEPS_WITH_FRAMES` steps a request) can be recorded for holds of any length. Holds the instance would refuse (too many
steps) go unchanged, so the client gets the instance's own error.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from platform_contracts.limits import MAX_HOLD_STEPS, MAX_HOLD_STEPS_WITH_FRAMES
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb

from platform_envhost import for_recording
from platform_envhost.step_events import StepEventBuilder

HOLD_CHUNK_STEPS = MAX_HOLD_STEPS_WITH_FRAMES  # a chunk can always bring its frames back

Forward = Callable[[bytes], Awaitable[bytes]]
PublishBatch = Callable[[bus_pb.StepEventBatch], Awaitable[None]]


def keep_steps_suffix(frames: bool) -> bytes:
    """Bytes that, appended to a hold request, merge `keep_steps` (and `frames`) into it."""
    return env_pb.EnvRequest(hold=env_pb.HoldRequest(keep_steps=True, frames=frames)).SerializeToString()


_KEEP = keep_steps_suffix(False)
_KEEP_WITH_FRAMES = keep_steps_suffix(True)


async def recorded_hold(forward: Forward, request: env_pb.EnvRequest, raw: bytes, builder: StepEventBuilder,
                        publish: PublishBatch, *, record_frames: bool,
                        agent: values_pb.DataMap | None) -> bytes:
    """Answer a hold of a recorded session and publish its steps; returns the response bytes.

    Args:
        forward: sends request bytes to the instance, returns the response bytes.
        request: the hold request, parsed from `raw` (which may carry merged trace context).
        agent: the checked agent data, recorded with the first step.
    """
    hold = request.hold
    if hold.steps > MAX_HOLD_STEPS or (hold.frames and hold.steps > MAX_HOLD_STEPS_WITH_FRAMES):
        return await forward(raw)  # refused by the instance: its error goes back as it is
    if hold.steps <= HOLD_CHUNK_STEPS:
        frames = hold.frames or record_frames
        answer = await forward(raw + (_KEEP_WITH_FRAMES if frames else _KEEP))
        response = env_pb.EnvResponse.FromString(answer)
        if response.HasField("error") or response.WhichOneof("result") != "hold":
            return answer
        await _publish_steps(publish, builder, hold.action, response.hold, agent)
        if hold.keep_steps and (hold.frames or not record_frames) and not for_recording.carries(response):
            return answer  # the client asked for everything the instance sent
        strip_hold(response.hold, keep_steps=hold.keep_steps, frames=hold.frames)
        return response.SerializeToString()
    return await _in_chunks(forward, request, raw, builder, publish, record_frames=record_frames, agent=agent)


async def _in_chunks(forward: Forward, request: env_pb.EnvRequest, raw: bytes, builder: StepEventBuilder,
                     publish: PublishBatch, *, record_frames: bool, agent: values_pb.DataMap | None) -> bytes:
    hold = request.hold
    chunk = env_pb.EnvRequest.FromString(raw)  # with the trace context merged into it
    chunk.hold.keep_steps = True
    chunk.hold.frames = record_frames  # a chunked hold is one the client asked no frames of
    combined = env_pb.HoldResponse()
    remaining = hold.steps
    while remaining > 0:
        steps = min(remaining, HOLD_CHUNK_STEPS)
        chunk.hold.steps = steps
        answer = await forward(chunk.SerializeToString())
        response = env_pb.EnvResponse.FromString(answer)
        if response.HasField("error") or response.WhichOneof("result") != "hold":
            return answer  # steps of earlier chunks are recorded; the client learns what failed
        part = response.hold
        await _publish_steps(publish, builder, hold.action, part, agent)
        agent = None
        chunk.hold.ClearField("agent")
        combined.steps += part.steps
        combined.rewards.extend(part.rewards)
        if hold.keep_steps:
            strip_hold(part, keep_steps=True, frames=False)
            combined.kept.extend(part.kept)
        remaining -= steps
        if part.steps < steps or part.terminated or part.truncated:  # the episode ended
            remaining = 0
        if remaining == 0:
            combined.observation.CopyFrom(part.observation)
            combined.terminated, combined.truncated = part.terminated, part.truncated
            combined.info.CopyFrom(part.info)
    return env_pb.EnvResponse(id=request.id, hold=combined).SerializeToString()


async def _publish_steps(publish: PublishBatch, builder: StepEventBuilder, action: values_pb.Value,
                         hold: env_pb.HoldResponse, agent: values_pb.DataMap | None) -> None:
    batch = bus_pb.StepEventBatch()
    builder.add_hold(batch.events, action, hold.kept, time.time(), agent)
    await publish(batch)


def strip_hold(hold: env_pb.HoldResponse, *, keep_steps: bool, frames: bool) -> None:
    """Remove from `hold` what the env host asked for and the client did not (`keep_steps`,
    `frames`: what the client asked), and what is never the client's (`ForRecording`)."""
    for_recording.strip_hold(hold)
    if not keep_steps:
        hold.ClearField("kept")
    if not frames:
        hold.ClearField("frames")
        for step in hold.kept:
            step.ClearField("frame")
            if step.HasField("auto_reset"):
                step.auto_reset.ClearField("final_frame")
