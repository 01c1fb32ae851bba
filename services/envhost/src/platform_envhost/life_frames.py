"""A life session's place in its life, for its instance to draw only the frames the life keeps.

A session that records frames into a life asks its instance for every reset's and step's frame
(`render_later`), but a thinned life (`frame_every`, `max_frames`) keeps few of them: which ones
depends on the life step (`platform_contracts.frame_thinning`), so on the steps the life had
before this session, which the recorder decides when it joins the session to the life (its
STARTED event). The env host asks the recorder for the session's recording
(`RECORDER_GET_RECORDING`: meta.json's `life_offset`, `life_session` and the life's settings),
again and again with growing pauses until the recorder has joined it, and then appends a
`FrameSchedule` to the session's next reset or step (merged into the request's bytes, as
`render_later`): from then on the instance draws only the kept frames. Until then it draws
them all (the recorder keeps the right ones): a schedule learned late costs frames, never
loses one.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from platform_bus import BusUnavailableError
from platform_bus import request as bus_request
from google.protobuf.message import DecodeError
from platform_contracts import subjects
from platform_contracts.frame_thinning import thinning
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.recorder.v1 import recorder_pb2 as rec_pb
from simulusion.session.v1.options_pb2 import SessionOptions

log = logging.getLogger(__name__)

# Pauses between asks (seconds): the recorder joins a session as soon as it reads its STARTED
# event, normally within milliseconds; one that lags is asked less and less often.
PAUSES = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
ASK_TIMEOUT_S = 5.0
GIVE_UP_AFTER_S = 600.0  # then every frame is drawn, as without a schedule


def records_life_frames(options: SessionOptions) -> bool:
    """The session records frames into a life (which may thin them)."""
    return bool(options.record and options.record_frames and options.life)


class LifeFrames:
    """Learns one session's place in its life (`start`, once) and hands out its FrameSchedule
    once (`take`: the bytes to append to a request, or b"")."""

    __slots__ = ("_schedule", "_session_id", "_task")

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._task: asyncio.Task[None] | None = None
        self._schedule: bytes | None = None

    def take(self, nc: Any) -> bytes:
        """The FrameSchedule to append to the next reset or step (once), or b"" while the place
        is unknown (asking the recorder starts with the first call)."""
        schedule = self._schedule
        if schedule:
            self._schedule = b""
            return schedule
        if self._task is None and schedule is None and nc is not None:
            self._task = asyncio.create_task(self._learn(nc), name=f"life-place-{self._session_id}")
        return b""

    def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _learn(self, nc: Any) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GIVE_UP_AFTER_S
        asked = 0
        while loop.time() < deadline:
            schedule = await self._ask(nc)
            if schedule is not None:  # a life that keeps every frame needs none (b"": nothing to send)
                thinned = thinning(schedule.frame_every, schedule.max_frames)
                self._schedule = env_pb.EnvRequest(frame_schedule=schedule).SerializeToString() if thinned else b""
                if thinned:
                    log.info("session %s: life step %d on (frame_every=%d, max_frames=%d): only the frames "
                             "the life keeps are drawn from its next step", self._session_id, schedule.offset,
                             schedule.frame_every, schedule.max_frames)
                return
            await asyncio.sleep(PAUSES[min(asked, len(PAUSES) - 1)])
            asked += 1
        log.warning("session %s: the recorder never told its place in its life; every frame is drawn",
                    self._session_id)
        self._schedule = b""

    async def _ask(self, nc: Any) -> env_pb.FrameSchedule | None:
        """The session's schedule from its recording's meta.json, or None while the recorder has
        not joined it to its life (no recording yet, no recorder, no answer)."""
        request = rec_pb.GetRecordingRequest(id=self._session_id).SerializeToString()
        try:
            msg = await bus_request(nc, subjects.RECORDER_GET_RECORDING, request, timeout=ASK_TIMEOUT_S,
                                    service="recorder")
            reply = rec_pb.GetRecordingReply.FromString(msg.data)
        except (BusUnavailableError, DecodeError) as exc:
            log.debug("session %s: no place in its life yet: %s", self._session_id, exc)
            return None
        meta = reply.recording
        if reply.HasField("error") or not meta.life or not meta.HasField("life_offset"):
            return None
        return schedule_of(meta)


def schedule_of(meta: rec_pb.RecordingMeta) -> env_pb.FrameSchedule:
    """The FrameSchedule of a life session's recording (meta.json's place and the life's settings)."""
    return env_pb.FrameSchedule(offset=meta.life_offset, first_session=meta.life_session == 0,
                                frame_every=max(0, meta.frame_every), max_frames=max(0, meta.max_frames))
