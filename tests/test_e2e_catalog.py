"""catalog.toml adds a Python factory and a Gymnasium id; both run as sessions."""

from __future__ import annotations

import os
import textwrap

import httpx
import numpy as np
import platform_sdk
from gymnasium.utils.env_checker import check_env
from platform_testing.platform import running_platform

FACTORY = '''
import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Reach(gym.Env):
    """A point that moves towards a goal; Dict observations, a Tuple action."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, size=5, render_mode=None):
        self.size = size
        self.render_mode = render_mode
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(0, size, (2,), np.float32), "goal": spaces.MultiDiscrete([size, size])}
        )
        self.action_space = spaces.Tuple([spaces.Discrete(4), spaces.MultiBinary(2)])

    def _obs(self):
        return {"position": self.position.copy(), "goal": self.goal.copy()}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = self.np_random.uniform(0, self.size, 2).astype(np.float32)
        self.goal = self.np_random.integers(0, self.size, 2)
        return self._obs(), {"distance": float(np.abs(self.position - self.goal).sum())}

    def step(self, action):
        direction, boost = action
        delta = [(0, 1), (0, -1), (1, 0), (-1, 0)][int(direction)]
        speed = 1.0 + float(boost.sum()) + self.np_random.normal(0, 0.01)
        self.position = np.clip(self.position + np.array(delta) * speed, 0, self.size).astype(np.float32)
        distance = float(np.abs(self.position - self.goal).sum())
        return self._obs(), -distance, distance < 0.5, False, {"distance": distance}

    def render(self):
        frame = np.zeros((32, 32, 3), np.uint8)
        x, y = (self.position / self.size * 31).astype(int)
        frame[y, x] = 255
        return frame


def make_env(**kwargs):
    return Reach(**kwargs)
'''


def test_catalog_entries_from_a_factory_and_a_gymnasium_id(tmp_path):
    envs = tmp_path / "my_envs"
    envs.mkdir()
    (envs / "reach_env.py").write_text(FACTORY)
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(
        textwrap.dedent(
            """
            [envs.reach]
            factory = "reach_env:make_env"
            path = "./my_envs"
            description = "A point reaching a goal"
            kwargs = { size = 7 }

            [envs.frozenlake]
            gymnasium_id = "FrozenLake-v1"
            kwargs = { is_slippery = false }
            options.map_name = { type = "choice", choices = ["4x4", "8x8"], default = "4x4" }
            """
        )
    )
    with running_platform(tmp_path / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack:
        listed = {e["id"] for e in httpx.get(f"{stack.url}/v0/envs").json()["data"]}
        assert {"reach", "frozenlake", "cartpole"} <= listed

        with platform_sdk.connect("reach", url=stack.url) as env:
            assert env.observation_space["goal"].nvec.tolist() == [7, 7], "catalog kwargs reach the factory"
            check_env(env)
            obs, _info = env.reset(seed=3)
            handle = env.snapshot()
            first = [env.step((2, np.array([1, 0], dtype=np.int8))) for _ in range(3)]
            env.restore(handle)
            second = [env.step((2, np.array([1, 0], dtype=np.int8))) for _ in range(3)]
            for a, b in zip(first, second):
                assert np.array_equal(a[0]["position"], b[0]["position"]) and a[1] == b[1]

        with platform_sdk.connect("frozenlake", url=stack.url, kwargs={"map_name": "8x8"}) as lake:
            obs, _ = lake.reset(seed=0)
            assert lake.observation_space.n == 64 and obs == 0
            obs, _reward, *_ = lake.step(2)  # not slippery: right moves right
            assert obs == 1


NO_ENGINE_DOCKER = """#!/bin/sh
# The Docker CLI on a machine whose engine is not running.
echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
exit 1
"""


def test_an_image_entry_without_a_docker_engine_is_a_clear_503(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(NO_ENGINE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    catalog = tmp_path / "catalog.toml"
    catalog.write_text('[envs.my-sim]\nimage = "my-org/my-simulator:latest"\n')
    extra = {"PLATFORM_CATALOG": str(catalog), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    with running_platform(tmp_path / "platform", extra_env=extra) as stack:
        response = httpx.post(f"{stack.url}/v0/sessions", json={"env_id": "my-sim"}, timeout=60)
        assert response.status_code == 503, response.text
        detail = response.json()["detail"]
        assert "my-org/my-simulator:latest" in detail and "no Docker engine is reachable" in detail
        assert "Traceback" not in detail
        sessions = httpx.get(f"{stack.url}/v0/sessions").json()
        assert sessions["count"] == 0, "the failed start left no open session"
