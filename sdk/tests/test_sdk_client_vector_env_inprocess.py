"""`RemoteVectorEnv` against `SyncVectorEnv`, step for step, with its requests answered by a
`VectorInstance` in this process (serialized and parsed as on the wire): the SDK's fast paths
(joined step requests, stacked observations) give what Gymnasium gives, infos included."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces as gs
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from platform_sdk.client.vector_env import RemoteVectorEnv
from platform_sdk.server.instance import EnvInstance
from platform_sdk.server.vector import VectorInstance
from simulusion.env.v1 import environment_pb2 as env_pb


class _InProcess(RemoteVectorEnv):
    def __init__(self, vector: VectorInstance, **options: Any) -> None:
        self._vector = vector
        super().__init__("test", len(vector.subs), **options)

    def _open(self, env_id: str, *args: Any, **kwargs: Any) -> env_pb.SpecResponse:
        self.env_id, self.session_id, self._closed = env_id, "s-test", False
        return self._vector.spec

    def _call(self, request: env_pb.EnvRequest, what: str, idempotent: bool = False) -> env_pb.EnvResponse:
        answer = self._vector.handle(env_pb.EnvRequest.FromString(request.SerializeToString()))
        response = env_pb.EnvResponse.FromString(answer.SerializeToString())
        if response.HasField("error"):
            raise self._error(response.error, what)
        return response

    def _close_session(self) -> None:
        self._closed = True


class _DictCounter(gym.Env[dict[str, Any], int]):
    """Dict observations (a Box and a Discrete), an info on some steps, episodes of 3 to 5 steps."""

    observation_space = gs.Dict({"pos": gs.Box(-np.inf, np.inf, (2,), np.float32), "count": gs.Discrete(8)})
    action_space = gs.Discrete(3)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self._count, self._length = 0, int(self.np_random.integers(3, 6))
        return self._obs(), {"start": self._length}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._count += 1
        info = {"odd": self._count} if self._count % 2 else {}
        return self._obs(action), float(action) - 0.5, self._count >= self._length, False, info

    def _obs(self, action: int = 0) -> dict[str, Any]:
        value = np.float32(self._count) if self._count != 2 else np.float32(np.nan)
        return {"pos": np.array([value, -np.inf if action == 2 else action], np.float32), "count": self._count}


def _envs(make: Any, n: int, mode: AutoresetMode) -> tuple[_InProcess, SyncVectorEnv]:
    vector = VectorInstance([EnvInstance(make(), "test") for _ in range(n)])
    return _InProcess(vector, autoreset_mode=mode), SyncVectorEnv([make for _ in range(n)], autoreset_mode=mode)


def _assert_same(got: Any, want: Any) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want)
        for key in want:
            _assert_same(got[key], want[key])
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_same(g, w)
    elif isinstance(want, np.ndarray) and want.dtype == object:
        assert got.shape == want.shape
        for g, w in zip(got, want, strict=True):
            _assert_same(g, w)
    else:
        np.testing.assert_array_equal(got, want)
        assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("env", ["CartPole-v1", "Pendulum-v1", "dict-counter"])
def test_steps_match_sync_vector_env(env: str, mode: AutoresetMode) -> None:
    def make() -> gym.Env[Any, Any]:
        return _DictCounter() if env == "dict-counter" else gym.make(env)

    remote, local = _envs(make, 4, mode)
    rng = np.random.default_rng(1)
    _assert_same(remote.reset(seed=5), local.reset(seed=5))
    for _ in range(240):  # Pendulum truncates at 200 steps
        actions = local.action_space.sample() if env == "Pendulum-v1" else rng.integers(0, 3 if env == "dict-counter" else 2, 4)
        got, want = remote.step(actions), local.step(actions)
        for g, w in zip(got, want, strict=True):
            _assert_same(g, w)
    remote.close()
    local.close()


def test_float_actions_of_a_discrete_space_are_truncated_to_integers() -> None:
    remote, local = _envs(lambda: gym.make("CartPole-v1"), 3, AutoresetMode.NEXT_STEP)
    remote.reset(seed=0)
    local.reset(seed=0)
    got, want = remote.step(np.array([0.0, 1.0, 1.9])), local.step(np.array([0, 1, 1]))
    _assert_same(got[0], want[0])


def test_restore_returns_each_sub_environments_restore_time_in_infos() -> None:
    remote, _ = _envs(_DictCounter, 3, AutoresetMode.NEXT_STEP)
    first, _ = remote.reset(seed=2)
    handles = remote.snapshot()
    remote.step(np.array([1, 2, 0]))
    observations, infos = remote.restore(handles)
    _assert_same(observations, first)
    assert infos["restore_s"].shape == (3,) and (infos["restore_s"] > 0).all() and infos["_restore_s"].all()
    assert infos["_start"].all()  # the snapshots' own infos (the reset's) beside it
    remote.close()


def test_sb3_face_of_a_batched_session_gives_what_it_gives_over_sync_vector_env() -> None:
    """`RemoteVectorEnv.sb3()` (Dict observations, infos, auto-reset in the step) against the same
    face over `SyncVectorEnv` in SAME_STEP mode."""
    from platform_sdk.client.sb3_vec import as_sb3_vec_env

    remote, local = _envs(_DictCounter, 3, AutoresetMode.SAME_STEP)
    face, reference = remote.sb3(), as_sb3_vec_env(local)
    face.seed(4)
    reference.seed(4)
    _assert_same(face.reset(), reference.reset())
    assert face.reset_infos == [{"start": s} for s in (i["start"] for i in reference.reset_infos)]
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(40):
        actions = rng.integers(0, 3, 3)
        got, want = face.step(actions), reference.step(actions)
        for g, w in zip(got[:3], want[:3], strict=True):
            _assert_same(g, w)
        for g, w in zip(got[3], want[3], strict=True):
            assert sorted(g) == sorted(w)
            for key in w:
                _assert_same(g[key], w[key])
        ended += int(got[2].sum())
    assert ended > 10
    face.close()


def test_sb3_face_needs_same_step_and_renders_every_sub_environment() -> None:
    remote, _ = _envs(lambda: gym.make("CartPole-v1", render_mode="rgb_array"), 2, AutoresetMode.NEXT_STEP)
    with pytest.raises(ValueError, match="SAME_STEP"):
        remote.sb3()
    remote.reset(seed=0)
    frames = remote.render()
    assert len(frames) == 2 and frames[0].shape == (400, 600, 3) and frames[0].dtype == np.uint8
    remote.close()
