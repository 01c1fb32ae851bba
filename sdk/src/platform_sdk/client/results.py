"""Turning the environment protocol's results into Gymnasium values on the client."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import gymnasium as gym
import numpy as np
from platform_contracts.spaces import decode_value
from platform_contracts.values import dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.errors import PlatformWarning


FRAMES_EXTRA = "pip install 'platform_sdk[frames]'"


def decode_jpeg(data: bytes) -> np.ndarray:
    """A JPEG as an RGB array (height, width, 3), by simplejpeg: an optional dependency of the
    client (its `frames` extra), so a clear error says how to install it when it is missing."""
    try:
        import simplejpeg
    except ImportError:
        raise ModuleNotFoundError(
            f"decoding JPEG frames needs simplejpeg, which is not installed: {FRAMES_EXTRA} "
            "(or pip install simplejpeg)", name="simplejpeg",
        ) from None
    rgb: np.ndarray = simplejpeg.decode_jpeg(data, colorspace="RGB")
    return rgb


def decode_frame(frame: env_pb.Frame) -> np.ndarray:
    """A frame as an RGB array (height, width, 3)."""
    if frame.encoding == "jpeg":
        return decode_jpeg(frame.data)
    return np.frombuffer(frame.data, dtype=np.uint8).reshape(frame.height, frame.width, 3)


def step_info(result: env_pb.StepResponse, space: gym.Space[Any]) -> dict[str, Any]:
    """The step's info; after an auto-reset (or an endless restart) it is the new episode's
    reset info with `final_obs` and `final_info`, and `restarted` when the episode ended
    without the step saying so (endless sessions)."""
    info = dict_from_datamap(result.info)
    if result.HasField("auto_reset"):
        ended = result.auto_reset
        info["final_obs"] = decode_value(ended.final_observation, space)
        info["final_info"] = dict_from_datamap(ended.final_info)
        if not (result.terminated or result.truncated):
            info["restarted"] = True
    return info


def restored_info(result: env_pb.RestoreResponse | env_pb.RestoreSavedResponse) -> dict[str, Any]:
    """A restore's (or restore_saved's) info with `restore_s`: the seconds the environment took
    to restore, as the environment server measured them (left out when it does not say: an
    older server)."""
    info = dict_from_datamap(result.info)
    if result.HasField("seconds"):
        info["restore_s"] = result.seconds
    return info


def warn_all(lines: Iterable[str], where: str) -> None:
    """Raise a PlatformWarning per line the platform sent back (e.g. agent data left out)."""
    for line in lines:
        warnings.warn(f"{where}: {line}", PlatformWarning, stacklevel=4)
