"""`platform_sdk.gym_ids`: the built-in catalog's `simulusion/<id>` Gymnasium ids, registered at
import without the network; gym.make's keyword arguments split into environment kwargs and the
SDK's options; `register_catalog` adding a platform's own entries."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import platform_sdk
import platform_sdk.gym_ids as gym_ids
import pytest
from gymnasium.vector import AutoresetMode, VectorEnv
from platform_sdk.client import remote_env, vector_env
from platform_sdk.client.builtin_ids import BUILTIN_IDS
from platform_sdk.client.rest import RestClient


def test_import_registers_every_builtin_id_without_network_or_client():
    code = textwrap.dedent("""
        import socket, sys
        def refuse(*args, **kwargs):
            raise AssertionError("network at import")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        import gymnasium as gym
        import platform_sdk.gym_ids
        from platform_sdk.client.builtin_ids import BUILTIN_IDS
        ours = [name for name in gym.registry if name.startswith("simulusion/")]
        assert len(ours) == len(BUILTIN_IDS) > 90, len(ours)
        heavy = [m for m in ("httpx", "platform_sdk.client.remote_env", "platform_contracts", "simulusion.env")
                 if m in sys.modules]
        assert not heavy, heavy
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_specs_carry_the_catalogs_limit_and_both_entry_points():
    spec = gym.spec("simulusion/cartpole")
    assert spec.namespace == "simulusion" and spec.name == "cartpole"
    assert spec.max_episode_steps == 500 == BUILTIN_IDS["cartpole"]
    assert spec.entry_point == gym_ids.GymIdOpener("cartpole", 500)
    assert spec.vector_entry_point == gym_ids.GymIdVectorOpener("cartpole", 500)
    assert gym.spec("simulusion/dmc-walker-walk").max_episode_steps is None  # the environment's own, told later
    assert gym.spec("simulusion/mountaincar-continuous").max_episode_steps == 999


def test_unknown_id_is_gymnasiums_error():
    with pytest.raises(gym.error.NameNotFound, match="nope"):
        gym.make("simulusion/nope")


def test_split_kwargs():
    env_kwargs, options = gym_ids.split_kwargs(
        "cartpole", {"record": True, "url": "http://x", "token": "t", "life": "a", "direct": False,
                     "sutton_barto_reward": True, "kwargs": {"frameskip": 4}})
    assert env_kwargs == {"sutton_barto_reward": True, "frameskip": 4}
    assert options == {"record": True, "url": "http://x", "token": "t", "life": "a", "direct": False}
    # an environment kwarg named like an SDK option goes in kwargs=
    assert gym_ids.split_kwargs("x", {"kwargs": {"record": 1}}) == ({"record": 1}, {})
    # autoreset_mode is make_vec's only
    assert gym_ids.split_kwargs("x", {"autoreset_mode": "SameStep"}) == ({"autoreset_mode": "SameStep"}, {})
    assert gym_ids.split_kwargs("x", {"autoreset_mode": "SameStep"}, vector=True) == ({}, {"autoreset_mode": "SameStep"})
    with pytest.raises(TypeError, match="g given both"):
        gym_ids.split_kwargs("pendulum", {"g": 1.0, "kwargs": {"g": 2.0}})
    with pytest.raises(TypeError, match="kwargs must be a dict"):
        gym_ids.split_kwargs("pendulum", {"kwargs": [1]})


class _FakeSession(gym.Env[np.ndarray, int]):
    made: ClassVar[list[tuple[str, dict[str, Any], Any]]] = []

    def __init__(self, env_id: str, kwargs: dict[str, Any] | None = None, settings: Any = None) -> None:
        self.made.append((env_id, dict(kwargs or {}), settings))
        self.env_id = env_id
        self.observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.metadata = {"render_modes": ["rgb_array"]}
        self.max_episode_steps = 77

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        return np.zeros(2, np.float32), {}


def test_make_passes_kwargs_to_the_environment_and_options_to_connect(monkeypatch):
    _FakeSession.made.clear()
    monkeypatch.setattr(remote_env, "RemoteEnv", _FakeSession)
    env = gym.make("simulusion/cartpole", record=True, url="http://platform:1", sutton_barto_reward=True,
                   render_mode="rgb_array")
    env_id, kwargs, settings = _FakeSession.made[-1]
    assert env_id == "cartpole" and kwargs == {"sutton_barto_reward": True}
    assert settings.record is True and settings.url == "http://platform:1" and settings.token is None
    assert env.spec.id == "simulusion/cartpole" and env.spec.max_episode_steps == 500
    # no catalog limit: the platform's (the session's max_episode_steps) in Gymnasium's TimeLimit
    env = gym.make("simulusion/dmc-walker-walk")
    assert env.spec.max_episode_steps == 77 and _FakeSession.made[-1][2].url is None  # PLATFORM_URL at open


class _FakeVector(VectorEnv[Any, Any, Any]):
    def __init__(self, **made: Any) -> None:
        self.made = made
        self.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}


def test_make_vec_is_one_batched_session(monkeypatch):
    calls: list[tuple[Any, ...]] = []

    def fake_make_vec(env_id: str, num_envs: int, **options: Any) -> _FakeVector:
        calls.append((env_id, num_envs, options))
        return _FakeVector(**options)

    monkeypatch.setattr(vector_env, "make_vec", fake_make_vec)
    envs = gym.make_vec("simulusion/cartpole", 16, record=True, autoreset_mode="SameStep")
    assert calls[-1] == ("cartpole", 16, {"kwargs": {}, "record": True, "autoreset_mode": "SameStep"})
    assert envs.spec.id == "simulusion/cartpole" and envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    gym.make_vec("simulusion/cartpole", 2, max_episode_steps=9, sutton_barto_reward=True)
    assert calls[-1] == ("cartpole", 2, {"kwargs": {"sutton_barto_reward": True, "max_episode_steps": 9}})


def test_register_catalog_adds_the_platforms_entries(monkeypatch):
    asked: list[tuple[str, str]] = []

    def answer(self: RestClient, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        asked.append((self.url, path))
        return {"data": [
            {"id": "cartpole", "options": [{"name": "max_episode_steps", "default": 500}]},
            {"id": "my-lab-env", "options": [{"name": "max_episode_steps", "default": 42}]},
            {"id": "free-env", "options": []},
        ], "count": 3}

    monkeypatch.setattr(RestClient, "request", answer)
    monkeypatch.setenv("PLATFORM_URL", "http://lab:9000")
    try:
        names = platform_sdk.register_catalog()
        assert names == ["simulusion/cartpole", "simulusion/my-lab-env", "simulusion/free-env"]
        assert asked == [("http://lab:9000", "/v0/envs")]
        assert gym.spec("simulusion/my-lab-env").max_episode_steps == 42
        assert gym.spec("simulusion/free-env").max_episode_steps is None
    finally:
        for name in ("simulusion/my-lab-env", "simulusion/free-env"):
            gym.registry.pop(name, None)
