"""`platform_sdk.recordings.play_back` on a real platform: a recorded CartPole episode (seeded,
with reset options) plays back matching on every step; an environment that stops being
deterministic after its third step is caught at that step; Dict observations and actions are
rebuilt from their recorded arrays; episodes that cannot be played back say why."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import platform_sdk
import pytest
from platform_sdk.recordings import PlayBackError, RecordingNotFoundError, play_back
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for

FACTORY = '''
import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Drift(gym.Env):
    """A point pushed by Dict actions; from its third step on it drifts by fresh OS randomness,
    so a seed no longer decides what it does."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, render_mode=None):
        self.render_mode = render_mode
        self.observation_space = spaces.Dict({"pos": spaces.Box(-100, 100, (2,), np.float32),
                                              "t": spaces.Discrete(1000)})
        self.action_space = spaces.Dict({"move": spaces.Discrete(3), "force": spaces.Box(0, 1, (1,), np.float32)})

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.pos = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return {"pos": self.pos.copy(), "t": self.t}, {}

    def step(self, action):
        self.t += 1
        self.pos[0] += (int(action["move"]) - 1) * float(action["force"][0])
        if self.t >= 3:
            self.pos[1] += np.random.default_rng().normal(0, 1)  # not from the seed
        return {"pos": self.pos.copy(), "t": self.t}, float(self.pos[0]), False, False, {}

    def render(self):
        return np.zeros((8, 8, 3), np.uint8)


def make_env(**kwargs):
    return Drift(**kwargs)
'''


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("play-back")
    (root / "envs").mkdir()
    (root / "envs" / "drift_env.py").write_text(FACTORY)
    catalog = root / "catalog.toml"
    catalog.write_text(textwrap.dedent("""
        [envs.drift]
        factory = "drift_env:make_env"
        path = "./envs"
        description = "A point that drifts at random from its third step"
    """))
    with running_platform(root / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack:
        yield stack


def _closed(stack: PlatformStack, sid: str, episodes: int) -> dict[str, Any]:
    def closed() -> dict[str, Any] | None:
        path = Path(stack.recordings) / sid / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        return meta if meta.get("status") == "closed" and len(meta.get("episodes", [])) >= episodes else None

    return wait_for(closed, what=f"recording {sid} closed with {episodes} episodes")


def test_a_seeded_cartpole_episode_plays_back_matching_every_step(platform):
    options = {"low": -0.2, "high": 0.2}
    with platform_sdk.connect("cartpole", url=platform.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=123, options=options)
        handle = env.snapshot()
        played = 0
        while True:
            _, _, terminated, truncated, _ = env.step(played % 3 % 2)
            played += 1
            if terminated or truncated:
                break
        env.restore(handle)  # episode 1 starts from a restore: it cannot be played back
        env.step(0)
    meta = _closed(platform, sid, 2)
    assert (meta["episodes"][0]["seed"], meta["episodes"][0]["reset_options"]) == (123, options)

    result = play_back(sid, 0, url=platform.url)
    assert result.matches and result.first_divergent_step is None
    assert (result.seed, result.reset_options) == (123, options)
    assert [s.index for s in result.steps] == list(range(played + 1)), "the reset, then every recorded step"
    assert all(s.observation_match is True and s.reward_match and s.flags_match for s in result.steps)
    assert [s.played_reward for s in result.steps[1:]] == [1.0] * played
    assert result.session_id != sid

    with pytest.raises(PlayBackError, match="began from a snapshot restore"):
        play_back(sid, 1, url=platform.url)
    with pytest.raises(RecordingNotFoundError, match="no finished episode 7"):
        play_back(sid, 7, url=platform.url)
    with pytest.raises(RecordingNotFoundError, match="not found"):
        play_back("s-no-such-recording", 0, url=platform.url)


def test_an_environment_that_stops_being_deterministic_diverges_at_that_step(platform):
    with platform_sdk.connect("drift", url=platform.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=5)
        for i in range(6):
            env.step({"move": i % 3, "force": [0.5]})
    _closed(platform, sid, 1)

    result = play_back(sid, 0, url=platform.url)
    assert not result.matches and result.first_divergent_step == 3
    assert [s.observation_match for s in result.steps] == [True, True, True, False, False, False, False]
    assert all(s.reward_match for s in result.steps), "the reward does not depend on the drift"
    assert result.seed == 5 and len(result.steps) == 7
