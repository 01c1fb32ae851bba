"""How frames are JPEG-encoded, by the environment server and by the recorder alike.

A recorded frame that is exactly its observation (an Atari screen) travels as a `Frame` of
encoding `OBSERVATION` with no data, and the recorder encodes it from the observation with
`jpeg_bytes`: the same function the environment server uses, so the bytes are the ones it
would have sent.
"""

from __future__ import annotations

import numpy as np
import simplejpeg
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_contracts.limits import DEFAULT_JPEG_QUALITY

OBSERVATION = "observation"  # Frame.encoding of a frame that is its observation
JPEG_COLORSPACES = {1: "GRAY", 3: "RGB", 4: "RGBA"}


def jpeg_bytes(array: np.ndarray, quality: int) -> bytes:
    """JPEG of a C-contiguous height x width x 1, 3 or 4 uint8 array (4:2:0 chroma)."""
    colorspace = JPEG_COLORSPACES[array.shape[2]]
    jpeg: bytes = simplejpeg.encode_jpeg(
        array,
        quality=quality,
        colorspace=colorspace,
        colorsubsampling="Gray" if colorspace == "GRAY" else "420",
    )
    return jpeg


def observation_marker(frame: np.ndarray, observation: object, quality: int) -> env_pb.Frame | None:
    """A `Frame` of encoding `OBSERVATION` when the rendered `frame` (height x width x 3 uint8)
    is exactly `observation`, else None."""
    if not (isinstance(observation, np.ndarray) and observation.shape == frame.shape
            and np.array_equal(observation, frame)):
        return None
    return observation_frame(observation, quality)


def observation_frame(observation: object, quality: int) -> env_pb.Frame | None:
    """A `Frame` of encoding `OBSERVATION` for `observation`, when it is an image (height x
    width x 3 uint8 array), else None: for a frame already known to be its observation."""
    if not (isinstance(observation, np.ndarray) and observation.dtype == np.uint8
            and observation.ndim == 3 and observation.shape[2] == 3):
        return None
    return env_pb.Frame(encoding=OBSERVATION, width=observation.shape[1], height=observation.shape[0],
                        quality=quality)


def observation_jpeg(frame: env_pb.Frame, observation: bytes) -> bytes:
    """The JPEG of an `OBSERVATION` frame, from its observation's bytes (a uint8 tensor's data).

    Raises:
        ValueError: the observation is not the frame's height x width x 3 bytes.
    """
    height, width = frame.height, frame.width
    if height <= 0 or width <= 0 or len(observation) != height * width * 3:
        raise ValueError(
            f"an observation of {len(observation)} bytes is not a {height} x {width} x 3 frame"
        )
    array = np.frombuffer(observation, dtype=np.uint8).reshape(height, width, 3)
    return jpeg_bytes(array, frame.quality or DEFAULT_JPEG_QUALITY)
