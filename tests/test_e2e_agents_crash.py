"""The run command when the environment crashes mid-run: one line naming the session, the
environment and the step, exit 1, and the agent saved first (--save)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_testing.platform import PlatformStack, clean_env, running_platform

CRASHING_ENV = '''
import os

import gymnasium as gym
import numpy as np


class CrashesAtStep(gym.Env):
    """Its process dies at its 30th step."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.steps += 1
        if self.steps == 30:
            os._exit(3)
        return np.zeros(1, np.float32), 1.0, self.steps % 10 == 0, False, {}


def make_env(**kwargs):
    return CrashesAtStep()
'''

COUNTING_AGENT = '''
import json


class Counting:
    def __init__(self):
        self.decisions = 0

    def start(self, env, streams):
        pass

    def act(self, observations, rewards, terminated, truncated, infos):
        self.decisions += 1
        return [0]

    def save(self, path):
        with open(path, "w") as f:
            json.dump({"decisions": self.decisions}, f)


def make(**settings):
    return Counting()
'''


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("crash")
    (root / "envs").mkdir()
    (root / "envs" / "crashing_env.py").write_text(CRASHING_ENV)
    catalog = root / "catalog.toml"
    catalog.write_text(textwrap.dedent("""
        [envs.crashing]
        factory = "crashing_env:make_env"
        path = "./envs"
        description = "Dies at its 30th step"
    """))
    with running_platform(root / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack:
        yield stack


def test_the_agent_is_saved_when_the_environment_crashes(platform: PlatformStack, tmp_path: Path) -> None:
    (tmp_path / "counting.py").write_text(COUNTING_AGENT)
    checkpoint = tmp_path / "agent.ckpt"
    done = subprocess.run([sys.executable, "-m", "platform_sdk.agents.run", "--agent", "counting:make", "--env",
                           "crashing", "--episodes", "10", "--save", str(checkpoint)], capture_output=True, text=True,
                          timeout=120, check=False, cwd=tmp_path, env={**clean_env(), "PLATFORM_URL": platform.url})
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("platform-agent: error: session s-"), lines
    assert "(crashing), step 30: " in lines[0], lines
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["ended"] == "platform error" and summary["episodes"] == 2 and summary["saved"] == str(checkpoint)
    assert json.loads(checkpoint.read_text()) == {"decisions": 30}
