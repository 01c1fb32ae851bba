"""Frames that are their observations: JPEG-encoded here, from the recorded observation.

An environment whose rendered frame is exactly its observation (an Atari screen) sends, for a
session that records frames, a `Frame` of encoding "observation" instead of a JPEG
(`platform_contracts.frames`): encoding it while the session steps would cost the stepping
client time. The recorder encodes it when the episode's file is written, with the encoder and
quality the environment server would have used, so the `frames` column is the same either way.

An environment whose picture is drawn from its observation (CartPole) sends a painted `Frame`
(`platform_contracts.painted_frames`: the painter's name and the environment's constants): the
recorder paints it from the recorded observation, then encodes it the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from platform_contracts.frames import OBSERVATION, observation_jpeg
from platform_contracts.painted_frames import is_painted, painted_jpeg
from platform_recorder.writing.held_observations import HeldObservations
from simulusion.env.v1 import environment_pb2, values_pb2

log = logging.getLogger(__name__)


def has_frame(frame: environment_pb2.Frame | None) -> bool:
    """The row has a frame: encoded data, or its observation."""
    return frame is not None and (bool(frame.data) or frame.encoding == OBSERVATION or is_painted(frame))


def _is_uint8(dtype_name: str) -> bool:
    try:
        return np.dtype(dtype_name) == np.uint8
    except TypeError:
        return False


def encode_observation_frames(
    frames: Sequence[environment_pb2.Frame | None],
    observations: Sequence[values_pb2.Value],
    where: str,
    seqs: Sequence[int] = (),
    held: HeldObservations | None = None,
) -> list[environment_pb2.Frame | None]:
    """`frames` with each "observation" frame replaced by the JPEG of `observations[i]` (a
    height x width x 3 uint8 tensor; its data from `held` when it holds the row's seq,
    `seqs[i]`), and each painted one by the JPEG of its picture painted from `observations[i]`.
    One whose observation is not what it needs is left out (None), and logged naming the row."""
    out: list[environment_pb2.Frame | None] = []
    for row, (frame, observation) in enumerate(zip(frames, observations, strict=True)):
        if frame is None or (frame.encoding != OBSERVATION and not is_painted(frame)):
            out.append(frame)
            continue
        tensor = observation.tensor if observation.WhichOneof("kind") == "tensor" else None
        try:
            data_of_row = (held.data(seqs[row]) if held and seqs[row] in held else tensor.data) if tensor is not None else b""
            if is_painted(frame):
                if tensor is None:
                    raise ValueError("the observation is not a tensor")
                data = painted_jpeg(frame, np.frombuffer(data_of_row, dtype=np.dtype(tensor.dtype)))
            elif tensor is None or not _is_uint8(tensor.dtype):
                raise ValueError("the observation is not a uint8 tensor")
            else:
                data = observation_jpeg(frame, data_of_row)
        except (ValueError, TypeError) as exc:
            log.error("%s: the frame of row %d is not recorded: %s", where, row, exc)
            out.append(None)
            continue
        out.append(environment_pb2.Frame(encoding="jpeg", width=frame.width, height=frame.height, data=data))
    return out
