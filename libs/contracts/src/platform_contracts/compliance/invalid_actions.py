"""Values that are not actions of a space, for the invalid-action check."""

from __future__ import annotations

from typing import Any

import numpy as np
from simulusion.env.v1 import values_pb2 as pb


def invalid_actions(space: Any) -> list[tuple[str, pb.Value]]:
    """Values that are not actions of `space`, with a few words on each."""
    from gymnasium import spaces as gs

    from platform_contracts.values import tensor_from_array

    if isinstance(space, gs.Discrete):
        return [(f"{int(space.start + space.n)} of {space}", pb.Value(discrete=int(space.start + space.n)))]
    if isinstance(space, gs.Box):
        wrong = np.zeros((*space.shape, 2), dtype=space.dtype)
        invalid = [(f"shape {wrong.shape} for {space.shape}", pb.Value(tensor=tensor_from_array(wrong)))]
        high = np.asarray(space.high)
        if np.issubdtype(space.dtype, np.floating) and np.all(np.isfinite(high)) and high.size:
            above = (high + np.maximum(1.0, np.abs(high))).astype(space.dtype)
            invalid.append(("above the high bound", pb.Value(tensor=tensor_from_array(above))))
        return invalid
    if isinstance(space, gs.MultiDiscrete):
        beyond = np.asarray(space.start + space.nvec, dtype=space.dtype)
        return [("each component one past its range", pb.Value(tensor=tensor_from_array(beyond)))]
    if isinstance(space, gs.MultiBinary):
        twos = np.full(space.shape, 2, dtype=space.dtype)
        return [("2s in a MultiBinary", pb.Value(tensor=tensor_from_array(twos)))]
    if isinstance(space, gs.Dict):
        return [("an empty dict", pb.Value(dict=pb.DictValue()))]
    if isinstance(space, gs.Tuple):
        return [("an empty tuple", pb.Value(tuple=pb.TupleValue()))]
    return []
