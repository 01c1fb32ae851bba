"""The `Probe`: a connection as a check sees it, with the spec and its decoded spaces."""

from __future__ import annotations

from typing import Any

import numpy as np
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

from platform_contracts.compliance.messages import one_line, short
from platform_contracts.compliance.results import CheckFailed, ComplianceOptions, Connection
from platform_contracts.compliance.trajectories import outcome
from platform_contracts.spaces import encode_value, space_from_proto
from platform_contracts.values import array_from_tensor


class Probe:
    """The connection, the spec and its decoded spaces, for one check."""

    def __init__(self, connection: Connection, options: ComplianceOptions) -> None:
        self.connection = connection
        self.options = options
        self._next_id = 0
        self.spec = self.ok(env_pb.EnvRequest(spec=env_pb.SpecRequest()), "spec").spec
        try:
            self.observation_space = space_from_proto(self.spec.observation_space)
            self.action_space = space_from_proto(self.spec.action_space, seed=options.seed)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"the spec's spaces do not decode: {one_line(exc)}") from None

    @property
    def renders(self) -> bool:
        return self.spec.render_mode not in ("", "human", "ansi")

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        self._next_id += 1
        request.id = self._next_id
        try:
            response = self.connection.call(request)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(
                f"the connection failed on {request.WhichOneof('command')}: {one_line(exc)}"
            ) from None
        if response.id != request.id:
            raise CheckFailed(f"response id {response.id} answers request {request.id}")
        return response

    def ok(self, request: env_pb.EnvRequest, what: str) -> env_pb.EnvResponse:
        """`call`, failing the check on an error or a response of the wrong kind."""
        command = request.WhichOneof("command")
        response = self.call(request)
        if response.HasField("error"):
            code = env_pb.ErrorCode.Name(response.error.code)
            raise CheckFailed(f"{what} answered {code}: {response.error.message}")
        if response.WhichOneof("result") != command:
            raise CheckFailed(f"{what} answered {response.WhichOneof('result')!r}, not {command!r}")
        return response

    def reset(self, seed: int | None = None, render: bool = False) -> env_pb.ResetResponse:
        request = env_pb.EnvRequest(reset=env_pb.ResetRequest(render=render))
        if seed is not None:
            request.reset.seed = seed
        return self.ok(request, f"reset(seed={seed})").reset

    def step(self, action: pb.Value, what: str, render: bool = False) -> env_pb.StepResponse:
        return self.ok(env_pb.EnvRequest(step=env_pb.StepRequest(action=action, render=render)), what).step

    def actions(self, count: int) -> list[pb.Value]:
        """`count` actions sampled from the action space (the same ones for the same seed)."""
        space = space_from_proto(self.spec.action_space, seed=self.options.seed)
        try:
            return [encode_value(space.sample(), space) for _ in range(count)]
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"cannot sample and encode actions of {space}: {one_line(exc)}") from None

    def rollout(self, seed: int, count: int, render: bool = False) -> list[tuple[Any, ...]]:
        """Reset with `seed`, then step `count` sampled actions or until the episode ends."""
        first = self.reset(seed, render=render)
        trajectory = [outcome(first.observation, 0.0, False, False, first.frame if render else None)]
        for index, action in enumerate(self.actions(count)):
            result = self.step(action, f"step {index + 1}", render=render)
            frame = result.frame if render else None
            trajectory.append(
                outcome(result.observation, result.reward, result.terminated, result.truncated, frame)
            )
            if result.terminated or result.truncated:
                break
        return trajectory

    def replay(self, actions: list[pb.Value], render: bool, where: str) -> list[tuple[Any, ...]]:
        """Step `actions` from where the environment is now, until they run out or the episode ends."""
        outcomes = []
        for index, action in enumerate(actions):
            result = self.step(action, f"step {index + 1} {where}", render=render)
            frame = result.frame if render else None
            outcomes.append(
                outcome(result.observation, result.reward, result.terminated, result.truncated, frame)
            )
            if result.terminated or result.truncated:
                break
        return outcomes

    def observation(self, value: pb.Value, where: str) -> Any:
        """The decoded observation, failing the check unless it lies in the observation space."""
        try:
            observation = decode(value, self.observation_space)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"the observation {where} does not decode: {one_line(exc)}") from None
        try:
            inside = bool(self.observation_space.contains(observation))
        except Exception:  # noqa: BLE001 - a malformed value can make contains() itself fail
            inside = False
        if not inside:
            raise CheckFailed(
                f"the observation {where} is not in {self.observation_space}: {short(observation)}"
            )
        return observation


def decode(value: pb.Value, space: Any) -> Any:
    """A Value as a value of `space` (Discrete values take the space's dtype, at any depth)."""
    from gymnasium import spaces as gs

    kind = value.WhichOneof("kind")
    if isinstance(space, gs.Dict) and kind == "dict":
        return {e.name: decode(e.value, space.spaces.get(e.name)) for e in value.dict.entries}
    if isinstance(space, gs.Tuple) and kind == "tuple":
        subspaces = list(space.spaces)
        return tuple(
            decode(v, subspaces[i] if i < len(subspaces) else None) for i, v in enumerate(value.tuple.values)
        )
    if kind == "discrete":
        dtype = space.dtype if isinstance(space, gs.Discrete) else np.int64
        return np.asarray(value.discrete, dtype=dtype)[()]
    if kind == "tensor":
        return array_from_tensor(value.tensor)
    if kind is None:
        raise ValueError("empty Value: no kind is set")
    raise ValueError(f"a {kind} value where {space} was expected")
