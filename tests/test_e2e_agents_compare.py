"""`python -m platform_sdk.agents.compare` as the agents guide gives it, on the Panda reach with a
mass change and its undoing: a feedback agent that moves the hand toward the target (and so
makes up for the heavier hand) against a fixed one that holds still; both branch from the same
saved snapshot and meet each change at the same session step; the comparison is stored, listed
and linked. An environment that cannot take snapshots is refused with one line. (The measures'
exact values on synthetic traces: sdk/tests/test_sdk_agents_compare_measures.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import PlatformStack, clean_env, running_platform
from platform_testing.waiting import wait_for

ENV = "menagerie-franka-emika-panda-reach"
AGENTS = '''
import numpy as np


class TowardTarget:
    """Moves the hand's target along the measured error each step: feedback, so a heavier hand
    that sags is pulled back up."""

    def start(self, env, streams):
        names = [name for name, _, _ in env.get_observation_labels()]
        assert "target_from_hand" in names, names
        self.slice = {name: slice(a, b) for name, a, b in env.get_observation_labels()}["target_from_hand"]

    def act(self, observations, rewards, terminated, truncated, infos):
        error = observations[0][self.slice]
        move = np.clip(error / 0.02, -1.0, 1.0)
        return [np.array([*move, 0.0], dtype=np.float32)]

    def readouts(self):
        return [{"gain": 1.0}]


def toward_target(**settings):
    return TowardTarget()


def hold_still(**settings):
    from platform_sdk.agents.builtin import ScriptedAgent

    return ScriptedAgent(action=[0.0, 0.0, 0.0, 0.0])
'''

LOCKED_ENV = '''
import threading

import gymnasium as gym
import numpy as np


class Locked(gym.Env):
    """Holds a lock, which cannot be pickled: no snapshots."""

    def __init__(self):
        self.observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.lock = threading.Lock()

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        return np.zeros(1, np.float32), 0.0, False, False, {}


def make_env(**kwargs):
    return Locked()
'''

TIMELINE = [{"at": 240, "change": "mass", "body": "hand", "scale": 5.0},
            {"at": 440, "change": "mass", "body": "hand", "scale": 1.0}]


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("compare")
    (root / "envs").mkdir()
    (root / "envs" / "locked_env.py").write_text(LOCKED_ENV)
    catalog = root / "catalog.toml"
    catalog.write_text(textwrap.dedent("""
        [envs.locked]
        factory = "locked_env:make_env"
        path = "./envs"
        description = "An environment that cannot be snapshotted"
    """))
    with running_platform(root / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack:
        yield stack


def compare(url: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "platform_sdk.agents.compare", *args], capture_output=True,
                          text=True, timeout=600, check=False, cwd=cwd, env={**clean_env(), "PLATFORM_URL": url})


def test_two_agents_branch_from_one_moment_and_meet_each_change_at_the_same_step(platform, tmp_path):
    (tmp_path / "reach_agents.py").write_text(AGENTS)
    kwargs = {"control": "hand", "world_changes": TIMELINE}
    done = compare(platform.url, tmp_path, "--env", ENV, "--agent", "adaptive=reach_agents:toward_target",
                   "--agent", "fixed=reach_agents:hold_still", "--warmup", "40", "--steps", "600",
                   "--window", "50", "--record", "--kwargs", json.dumps(kwargs))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    summary = json.loads(lines[-1])
    link = summary["link"]
    assert f"comparison {summary['comparison_id']}: {link}" in lines
    assert link == f"{platform.url}/comparisons/{summary['comparison_id']}"
    for name in ("adaptive", "fixed"):  # progress every tenth of the steps, in whole windows (50 of 600)
        progress = [line.split(",")[0] for line in lines if line.startswith(f"{name}: ") and "/600 steps" in line]
        assert progress == [f"{name}: {step}/600 steps" for step in range(50, 600, 50)], lines

    http = httpx.Client(base_url=platform.url, timeout=60)
    stored = http.get(f"/v0/comparisons/{summary['comparison_id']}")
    assert stored.status_code == 200, stored.text
    document = stored.json()
    assert (document["env"], document["warmup"], document["steps"], document["window"]) == (ENV, 40, 600, 50)
    assert document["first_step"] == 40 and document["world_changes"] == TIMELINE
    adaptive, fixed = document["agents"]
    assert (adaptive["name"], fixed["name"]) == ("adaptive", "fixed")
    # Both meet each change at the same session step, the one the timeline names.
    assert adaptive["world_changes_met"] == fixed["world_changes_met"] == [
        {"at": 240, "session_step": 240}, {"at": 440, "session_step": 440}]
    for agent in (adaptive, fixed):
        assert agent["steps"] == 600 and agent["episodes"] == 3  # 200-step episodes from step 40: ends at 200, 400, 600
        assert [w["step"] for w in agent["reward_windows"]] == list(range(40, 640, 50))[:12]
        assert [r["at"] for r in agent["measures"]["recovery"]] == [240, 440]
        assert [r["at"] for r in agent["measures"]["retention"]] == [440]
        assert agent["measures"]["compute_s"] > 0
        meta = http.get(f"/v0/recordings/{agent['recording_id']}").json()
        assert meta["env_id"] == ENV and meta["kwargs"]["world_changes"] == TIMELINE
    assert adaptive["measures"]["success"] > fixed["measures"]["success"]
    assert adaptive["session_id"] != fixed["session_id"]
    listed = http.get("/v0/comparisons").json()["comparisons"]
    assert summary["comparison_id"] in [c["id"] for c in listed]


def test_an_environment_without_snapshots_is_refused(platform, tmp_path):
    done = compare(platform.url, tmp_path, "--env", "locked", "--agent", "r=platform_sdk.agents.builtin:RandomAgent",
                   "--steps", "10")
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("platform-compare: error: locked cannot take snapshots ("), lines
    assert "compare agents on an environment that supports snapshots" in lines[0]


def test_over_several_seeds_every_agent_runs_from_each_seeds_snapshot(platform, tmp_path):
    done = compare(platform.url, tmp_path, "--env", "cartpole", "--agent", "a=platform_sdk.agents.builtin:RandomAgent",
                   "--agent", "b=platform_sdk.agents.builtin:RandomAgent", "--warmup", "10", "--steps", "60",
                   "--window", "10", "--seeds", "2", "--seed", "5", "--record")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["seeds"] == [5, 6]
    http = httpx.Client(base_url=platform.url, timeout=60)
    document = http.get(f"/v0/comparisons/{summary['comparison_id']}").json()
    assert (document["seed"], document["seeds"]) == (5, [5, 6])
    a, b = document["agents"]
    for agent in (a, b):
        assert [run["seed"] for run in agent["runs"]] == [5, 6]
        assert all(run["steps"] == 60 and run["recording_id"] for run in agent["runs"])
        first = agent["runs"][0]  # the agent's top-level entry is its first seed's run
        assert (agent["measures"], agent["recording_id"], agent["reward_windows"]) == (
            first["measures"], first["recording_id"], first["reward_windows"])
    snapshots = [[run["snapshot_id"] for run in agent["runs"]] for agent in (a, b)]
    assert snapshots[0] == snapshots[1] and len(set(snapshots[0])) == 2  # one snapshot per seed, shared by both
    assert document["snapshot_id"] == snapshots[0][0]
    recordings = {run["recording_id"] for agent in (a, b) for run in agent["runs"]}
    assert len(recordings) == 4
    for recording in recordings:  # the recorder may still be writing the last runs' (it lags the steps)
        found = wait_for(lambda: _found(http, f"/v0/recordings/{recording}"), timeout=60,
                         what=f"recording {recording} at the gateway")
        assert found["env_id"] == "cartpole"


def _found(http: httpx.Client, path: str) -> dict | None:
    """The JSON `path` answers, or None while it answers 404."""
    answer = http.get(path)
    if answer.status_code == 404:
        return None
    answer.raise_for_status()
    return answer.json()


def test_seeds_must_be_a_positive_count(platform, tmp_path):
    done = compare(platform.url, tmp_path, "--env", "cartpole", "--agent", "r=platform_sdk.agents.builtin:RandomAgent",
                   "--steps", "10", "--seeds", "0")
    assert done.returncode == 2 and "--seeds" in done.stderr, done.stderr
