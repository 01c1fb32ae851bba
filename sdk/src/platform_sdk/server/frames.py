"""Encode rendered frames (H x W x C uint8 arrays) as JPEG `Frame`s."""

from __future__ import annotations

from typing import Any

import numpy as np
from platform_contracts.frames import JPEG_COLORSPACES, jpeg_bytes
from simulusion.env.v1 import environment_pb2 as env_pb


def frame_array(frame: Any) -> np.ndarray:
    """A rendered frame as a contiguous H x W x C uint8 array, ready for `encode_frame`.

    Raises:
        ValueError: `frame` is not an H x W, H x W x 1, H x W x 3 or H x W x 4 array.
    """
    array = np.asarray(frame)
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] not in JPEG_COLORSPACES or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"cannot encode a frame of shape {array.shape}: expected height x width x 1, 3 or 4")
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(array)


def encode_frame(frame: Any, quality: int = 90) -> env_pb.Frame:
    """Encode one rendered frame as a JPEG `Frame`.

    Raises:
        ValueError: `frame` is not an H x W, H x W x 1, H x W x 3 or H x W x 4 array.
    """
    array = frame_array(frame)
    return env_pb.Frame(encoding="jpeg", width=array.shape[1], height=array.shape[0], data=jpeg_bytes(array, quality))
