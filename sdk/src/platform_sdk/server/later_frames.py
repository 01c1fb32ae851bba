"""Frames rendered for resets and steps that asked `render_later`, sent with a later answer.

A recorded session with frames needs every step's frame, but its client did not ask for them:
JPEG-encoding a frame (~50 µs for an Atari screen) while the client waits would cost it ~5% of
a Pong step. So the env host asks `render_later`: the frame is rendered at once (the next step
changes it), kept as an array, and encoded after the answer has gone out (`encode`, called by
the server once it has sent the answer, while the client and the env host are busy with it).
The encoded frames ride on the next answer (`EnvResponse.later_frames`), in order, or on the
answer of a `take_frames` request.

A frame that is exactly its observation (an Atari screen: `render()` is the observation) is not
encoded at all: it is sent as a `Frame` of encoding "observation" (checked when the frame would
be encoded), and the recorder encodes it from the observation it records anyway. An environment
that says so itself (`render_is_observation`, see `EnvInstance.later_frame`) is not even
rendered: its frame is kept as `RENDER_IS_OBSERVATION` (a render and a comparison cost ~30 µs of
a Pong step, most of it before the answer). Nor is one whose picture the recorder paints from the
observation (CartPole, `painted`): its frame is kept as the painted `Frame` itself.
"""

from __future__ import annotations

import logging
from typing import Any

from platform_contracts.frames import observation_frame, observation_marker
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.server.frames import encode_frame

log = logging.getLogger(__name__)


class _RenderIsObservation:
    """The frame kept for an environment whose render() is its observation: nothing rendered."""

    def __repr__(self) -> str:
        return "RENDER_IS_OBSERVATION"


RENDER_IS_OBSERVATION: Any = _RenderIsObservation()


class _NotDrawn:
    """The frame kept for a `render_later` request whose frame a thinned life drops
    (`frame_schedule`): nothing drawn, and its LaterFrame comes without `frame`."""

    def __repr__(self) -> str:
        return "NOT_DRAWN"


NOT_DRAWN: Any = _NotDrawn()


class LaterFrames:
    """The rendered frames not yet encoded and the encoded ones not yet sent.

    Args:
        env_id: names the environment in the log when a frame cannot be encoded.
        quality: JPEG quality (1-100).
    """

    def __init__(self, env_id: str, quality: int) -> None:
        self._env_id = env_id
        self._quality = quality
        # (request id, frame, its observation, final frame or None, final observation)
        self._rendered: list[tuple[int, Any, Any, Any, Any]] = []
        self._encoded: list[env_pb.LaterFrame] = []

    def keep(self, request_id: int, frame: Any, observation: Any, final_frame: Any = None,
             final_observation: Any = None) -> None:
        """Keep the rendered (validated, `frames.frame_array`) frames of request `request_id` and
        the observations its answer carried. They must stay unchanged until `encode`, which runs
        before the next request."""
        self._rendered.append((request_id, frame, observation, final_frame, final_observation))

    def encode(self) -> None:
        """Encode the kept frames: an "observation" frame for one that is exactly its
        observation, else JPEG (a frame that fails is sent empty, and logged)."""
        rendered, self._rendered = self._rendered, []
        for request_id, frame, observation, final_frame, final_observation in rendered:
            later = env_pb.LaterFrame(request_id=request_id)
            if frame is NOT_DRAWN:
                self._encoded.append(later)
                continue
            try:
                later.frame.CopyFrom(self._encoded_frame(frame, observation))
                if final_frame is not None:
                    later.final_frame.CopyFrom(self._encoded_frame(final_frame, final_observation))
            except Exception:  # a frame is recorded data, but never worth failing the session
                log.exception("%s: the frame of request %d could not be encoded", self._env_id, request_id)
            self._encoded.append(later)

    def _encoded_frame(self, frame: Any, observation: Any) -> env_pb.Frame:
        if isinstance(frame, env_pb.Frame):  # painted by the recorder (`painted`)
            return frame
        if frame is RENDER_IS_OBSERVATION:
            marker = observation_frame(observation, self._quality)
            if marker is None:
                raise ValueError("the environment says render() is its observation (render_is_observation), "
                                 f"but the observation is not a height x width x 3 uint8 image: {_describe(observation)}")
            return marker
        return observation_marker(frame, observation, self._quality) or encode_frame(frame, self._quality)

    def attach(self, response: env_pb.EnvResponse) -> None:
        """Move the encoded frames into `response` (the frames kept since are left for later)."""
        if self._encoded:
            response.later_frames.extend(self._encoded)
            self._encoded.clear()


def _describe(observation: Any) -> str:
    shape, dtype = getattr(observation, "shape", None), getattr(observation, "dtype", None)
    return f"{type(observation).__name__} of shape {shape} and dtype {dtype}" if shape is not None else type(observation).__name__
