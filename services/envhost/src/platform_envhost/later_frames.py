"""The frames a recorded session's steps get with a later answer (`render_later`).

A session that records frames needs every reset's and step's frame, which its client did not
ask for. Encoding one (JPEG, ~50 µs for an Atari screen) before answering would cost the
client ~5% of a Pong step, so the env host asks `render_later` instead of `render`: the
instance renders at once and encodes after its answer has gone out; the frame comes with the
instance's next answer (`EnvResponse.later_frames`), or with the answer to a `take_frames`
request, which the env host sends before a command whose answer it does not read, when the
client has gone quiet (`Router`), and before stopping the instance (`InstanceTable.stop`).

`LaterFrames` keeps, per instance, a `FrameDue` per request that asked, in the order asked; the
request's step events wait for it (`deferred_events`). An instance that dies owes its frames
forever: they are given up and the events go without them.

An environment server of an older SDK ignores `render_later`: its first answer says no
`frame_later`, so the env host takes that frame with a `render` request at once and asks
`render` (the frame in the answer) from then on (`supported`).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable

from simulusion.env.v1 import environment_pb2 as env_pb

log = logging.getLogger(__name__)

# Appended to a request's bytes, these merge `render_later = true` into its reset or step
# (protobuf merges repeated occurrences of a message field): it is never re-encoded.
RENDER_LATER = {
    "reset": env_pb.EnvRequest(reset=env_pb.ResetRequest(render_later=True)).SerializeToString(),
    "step": env_pb.EnvRequest(step=env_pb.StepRequest(render_later=True)).SerializeToString(),
}
RENDER_NOW = {
    "reset": env_pb.EnvRequest(reset=env_pb.ResetRequest(render=True)).SerializeToString(),
    "step": env_pb.EnvRequest(step=env_pb.StepRequest(render=True)).SerializeToString(),
}
TAKE_FRAMES = env_pb.EnvRequest(take_frames=env_pb.TakeFramesRequest()).SerializeToString()
RENDER = env_pb.EnvRequest(render=env_pb.RenderRequest()).SerializeToString()


def asks_render_later(request: env_pb.EnvRequest, record_frames: bool) -> bool:
    """The env host asks `render_later` for this request: a reset or step of a session that
    records frames, which does not ask for its frame itself."""
    if not record_frames:
        return False
    command = request.WhichOneof("command")
    return command in RENDER_LATER and not getattr(request, command).render


class FrameDue:
    """The frames owed to one request (set once they arrive, or given up)."""

    __slots__ = ("final_frame", "frame", "request_id", "settled")

    def __init__(self, request_id: int) -> None:
        self.request_id = request_id
        self.frame: env_pb.Frame | None = None
        self.final_frame: env_pb.Frame | None = None
        self.settled = False


class LaterFrames:
    """An instance's frames due, in the order they were asked for.

    `owed`: the last request forwarded asked `render_later`, so the instance holds a frame that
    only its next answer will carry. `supported`: whether the instance renders later (None
    until its first answer to `render_later` says).
    """

    __slots__ = ("_due", "owed", "supported")

    def __init__(self) -> None:
        self._due: deque[FrameDue] = deque()
        self.owed = False
        self.supported: bool | None = None

    def suffix(self, command: str) -> bytes:
        """What to append to a reset or step that asks for its frame for the recording."""
        return (RENDER_NOW if self.supported is False else RENDER_LATER)[command]

    def expect(self, request_id: int) -> FrameDue:
        while self._due and self._due[0].settled:  # e.g. answers that said no frame follows
            self._due.popleft()
        due = FrameDue(request_id)
        self._due.append(due)
        return due

    def waiting(self) -> bool:
        """Some request still waits for its frame."""
        return any(not due.settled for due in self._due)

    def arrived(self, frames: Iterable[env_pb.LaterFrame], where: str) -> None:
        """Hand each frame that came to the request it belongs to (frames come in order; a
        request passed over is given up, as its frame will not come any more)."""
        for later in frames:
            while self._due:
                due = self._due.popleft()
                if due.settled:
                    continue
                due.settled = True
                if due.request_id == later.request_id:
                    due.frame = later.frame if later.HasField("frame") else None
                    due.final_frame = later.final_frame if later.HasField("final_frame") else None
                    break
                log.warning("%s: the frame of request %d never came (the next was of request %d)",
                            where, due.request_id, later.request_id)
            else:
                log.warning("%s: a frame of request %d came that no request waits for", where, later.request_id)

    def give_up(self, where: str, reason: str) -> None:
        """Settle every request still waiting, without its frame (`reason` says why)."""
        lost = [due.request_id for due in self._due if not due.settled]
        for due in self._due:
            due.settled = True
        self._due.clear()
        self.owed = False
        if lost:
            log.warning("%s: %d frame(s) lost (%s): requests %s", where, len(lost), reason, lost[:10])
