"""Frames painted from the observation: classic control's pictures, drawn where they are stored.

A recorded CartPole step's frame costs its environment server ~1.8 ms to render with pygame and
~0.5 ms to JPEG-encode, against ~0.4 ms for the whole step, and its JPEG (~6 KB) then crosses the
env host, NATS and the recorder: recording frames cut an agent's rate to a fifth. Yet the
picture is a function of the observation (the cart's position and the pole's angle) and two
constants of the environment. So the server sends, for a recorded frame, a `Frame` of encoding
`painted:<painter>` whose data holds those constants (16 bytes, no picture), and the recorder
paints the picture from the recorded observation when it writes the episode's file, then
encodes it as any other (`painted_jpeg`): the file holds the same JPEG frames, drawn off the
step path.

Each painter draws what Gymnasium's `render()` draws for that environment (same size, geometry
and colours; edges are not anti-aliased), from numpy alone.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

import numpy as np
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_contracts.frames import jpeg_bytes
from platform_contracts.limits import DEFAULT_JPEG_QUALITY

PAINTED_PREFIX = "painted:"  # Frame.encoding of a painted frame: the prefix, then the painter's name
_CARTPOLE_CONSTANTS = struct.Struct("<2d")  # the pole's half length, the cart's position limit
CARTPOLE_SIZE = (400, 600)  # height, width: Gymnasium's CartPole screen


def is_painted(frame: env_pb.Frame) -> bool:
    return frame.encoding.startswith(PAINTED_PREFIX)


def cartpole_frame(length: float, x_threshold: float, quality: int) -> env_pb.Frame:
    """The painted `Frame` of a CartPole step (`length`, `x_threshold`: the environment's)."""
    height, width = CARTPOLE_SIZE
    return env_pb.Frame(encoding=PAINTED_PREFIX + "cartpole", width=width, height=height, quality=quality,
                        data=_CARTPOLE_CONSTANTS.pack(length, x_threshold))


def _fill_box(canvas: np.ndarray, left: float, right: float, top: float, bottom: float,
              colour: tuple[int, int, int]) -> None:
    """Fill the pixels whose centres lie within half a pixel of the box (x right, y down)."""
    height, width = canvas.shape[:2]
    x0, x1 = max(0, math.ceil(left - 0.5)), min(width, math.floor(right + 0.5) + 1)
    y0, y1 = max(0, math.ceil(top - 0.5)), min(height, math.floor(bottom + 0.5) + 1)
    if x0 < x1 and y0 < y1:
        canvas[y0:y1, x0:x1] = colour


def _fill_bar(canvas: np.ndarray, start: tuple[float, float], direction: tuple[float, float], length: float,
              back: float, half_width: float, colour: tuple[int, int, int]) -> None:
    """Fill a rotated rectangle (x right, y down): from `back` behind `start` to `length` ahead of
    it along the unit vector `direction`, `half_width` to each side; the pixels whose centres lie
    within half a pixel of it."""
    height, width = canvas.shape[:2]
    (sx, sy), (dx, dy) = start, direction
    ends = [(sx + dx * a + dy * b, sy + dy * a - dx * b) for a in (-back, length) for b in (-half_width, half_width)]
    x0 = max(0, math.floor(min(x for x, _ in ends)) - 1)
    x1 = min(width, math.ceil(max(x for x, _ in ends)) + 2)
    y0 = max(0, math.floor(min(y for _, y in ends)) - 1)
    y1 = min(height, math.ceil(max(y for _, y in ends)) + 2)
    if x0 >= x1 or y0 >= y1:
        return
    px = np.arange(x0, x1, dtype=np.float32) - np.float32(sx)
    py = np.arange(y0, y1, dtype=np.float32)[:, None] - np.float32(sy)
    along = px * np.float32(dx) + py * np.float32(dy)
    across = px * np.float32(dy) - py * np.float32(dx)
    inside = (along >= -back - 0.5) & (along <= length + 0.5) & (np.abs(across) <= half_width + 0.5)
    canvas[y0:y1, x0:x1][inside] = colour


def _fill_disc(canvas: np.ndarray, cx: int, cy: int, radius: int, colour: tuple[int, int, int]) -> None:
    height, width = canvas.shape[:2]
    y0, y1 = max(0, cy - radius), min(height, cy + radius + 1)
    x0, x1 = max(0, cx - radius), min(width, cx + radius + 1)
    if x0 >= x1 or y0 >= y1:
        return
    dy = np.arange(y0, y1)[:, None] - cy
    dx = np.arange(x0, x1)[None, :] - cx
    canvas[y0:y1, x0:x1][dx * dx + dy * dy <= radius * radius + radius] = colour


def paint_cartpole(observation: np.ndarray, constants: bytes) -> np.ndarray:
    """Gymnasium CartPole's frame (400 x 600 x 3 uint8) of state `observation` (position,
    velocity, angle, angular velocity)."""
    length, x_threshold = _CARTPOLE_CONSTANTS.unpack(constants)
    height, width = CARTPOLE_SIZE
    scale = width / (x_threshold * 2)
    pole_width, pole_length = 10.0, scale * (2 * length)
    cart_x = float(observation[0]) * scale + width / 2.0
    cart_y, axle_offset = 100.0, 30.0 / 4.0  # the top of the track, pygame's y (up, before the flip)
    canvas = np.full((height, width, 3), 255, dtype=np.uint8)

    row = height - 1  # pygame's y (up, before Gymnasium flips the picture) -> the image's row: row - y
    _fill_box(canvas, cart_x - 25.0, cart_x + 25.0, row - (cart_y + 15.0), row - (cart_y - 15.0), (0, 0, 0))
    # the pole: from the axle, along its angle (0: straight up; positive: leaning right)
    angle = float(observation[2])
    _fill_bar(canvas, (cart_x, row - (cart_y + axle_offset)), (math.sin(angle), -math.cos(angle)),
              pole_length - pole_width / 2, pole_width / 2, pole_width / 2, (202, 152, 101))
    axle_x, axle_y = int(cart_x), int(cart_y + axle_offset)
    _fill_disc(canvas, axle_x, height - 1 - axle_y, int(pole_width / 2), (129, 132, 203))
    canvas[height - 1 - int(cart_y), :] = 0  # the track
    return canvas


PAINTERS: dict[str, Callable[[np.ndarray, bytes], np.ndarray]] = {"cartpole": paint_cartpole}


def painted_array(frame: env_pb.Frame, observation: np.ndarray) -> np.ndarray:
    """The picture of a painted `frame`, from the step's observation.

    Raises:
        ValueError: an unknown painter, or an observation or constants it cannot paint.
    """
    name = frame.encoding[len(PAINTED_PREFIX):]
    painter = PAINTERS.get(name)
    if painter is None:
        raise ValueError(f"no painter {name!r} (known: {', '.join(sorted(PAINTERS))})")
    try:
        return painter(np.asarray(observation).reshape(-1), frame.data)
    except (struct.error, IndexError, TypeError) as exc:
        raise ValueError(f"painter {name!r} cannot paint this observation: {exc}") from None


def painted_jpeg(frame: env_pb.Frame, observation: np.ndarray) -> bytes:
    """The JPEG of a painted `frame`, with the quality the environment server would have used."""
    return jpeg_bytes(painted_array(frame, observation), frame.quality or DEFAULT_JPEG_QUALITY)
