"""Trajectories compared bit for bit: each step's outcome as a key, and their comparison.

The trajectories themselves are stepped by the `Probe` (`rollout`, `replay`)."""

from __future__ import annotations

import math
from typing import Any

from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

from platform_contracts.compliance.results import CheckFailed


def outcome(
    observation: pb.Value, reward: float, terminated: bool, truncated: bool, frame: env_pb.Frame | None
) -> tuple[Any, ...]:
    """What a step returned, in a form compared bit for bit."""
    frame_key = None if frame is None else (frame.encoding, frame.width, frame.height, frame.data)
    return (value_key(observation), float(reward), bool(terminated), bool(truncated), frame_key)


def value_key(value: pb.Value) -> Any:
    """A hashable, bit-exact key of a Value (NaNs compare equal to themselves)."""
    kind = value.WhichOneof("kind")
    if kind == "tensor":
        return ("tensor", value.tensor.dtype, tuple(value.tensor.shape), value.tensor.data)
    if kind == "dict":
        return ("dict", tuple((e.name, value_key(e.value)) for e in value.dict.entries))
    if kind == "tuple":
        return ("tuple", tuple(value_key(v) for v in value.tuple.values))
    return (kind, value.SerializeToString(deterministic=True))


def same_trajectory(
    expected: list[tuple[Any, ...]],
    actual: list[tuple[Any, ...]],
    where: str,
    start: str = "the reset observation",
) -> None:
    """Fail the check at the first step where `actual` differs from `expected`, or in length."""
    fields = ("observation", "reward", "terminated", "truncated", "frame")
    for index, (a, b) in enumerate(zip(expected, actual, strict=False)):
        step = start if index == 0 else f"step {index}"
        for name, x, y in zip(fields, a, b, strict=True):
            same = (x == y) or (
                isinstance(x, float) and math.isnan(x) and isinstance(y, float) and math.isnan(y)
            )
            if not same:
                detail = f" ({x!r} != {y!r})" if name in ("reward", "terminated", "truncated") else ""
                raise CheckFailed(f"{step} {where}: the {name} differs{detail}")
    if len(expected) != len(actual):
        raise CheckFailed(f"{where}: the episode lasted {len(actual) - 1} steps, not {len(expected) - 1}")
