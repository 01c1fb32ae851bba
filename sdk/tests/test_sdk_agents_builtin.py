"""`platform_sdk.agents.builtin`: the seeded RandomAgent, and the ScriptedAgent's script, its
teacher following and its refusals; and loading agents (`module:function`, settings, errors)."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from platform_sdk.agents import AgentError, AgentLoadError, RandomAgent, ScriptedAgent, load_agent


class Spec:
    def __init__(self, space: gym.Space) -> None:  # type: ignore[type-arg]
        self.action_space = space


def acts(agent, space, streams=1, infos=None, calls=5):  # type: ignore[no-untyped-def]
    agent.start(Spec(space), streams)
    infos = infos or [{} for _ in range(streams)]
    return [agent.act([None] * streams, [None] * streams, [False] * streams, [False] * streams, infos)
            for _ in range(calls)]


def test_random_agent_repeats_for_a_seed_and_leaves_the_sessions_space_alone() -> None:
    space = gym.spaces.Discrete(4)
    space.seed(123)
    first = acts(RandomAgent(seed=3), space, streams=2)
    assert first == acts(RandomAgent(seed=3), space, streams=2)
    assert first != acts(RandomAgent(seed=4), space, streams=2)
    assert all(type(a) is int for actions in first for a in actions)
    box = gym.spaces.Box(-1, 1, (3,), np.float32)
    assert all(box.contains(a) for actions in acts(RandomAgent(), box) for a in actions)
    assert RandomAgent(seed=5).info() == {"agent": "random", "seed": 5}


def test_scripted_agent_cycles_its_actions_per_stream() -> None:
    space = gym.spaces.Discrete(3)
    assert acts(ScriptedAgent(actions=[0, 2]), space, streams=2, calls=3) == [[0, 0], [2, 2], [0, 0]]
    box = gym.spaces.Box(-1, 1, (2,), np.float32)
    [[action]] = acts(ScriptedAgent(action=[0.5, -0.5]), box, calls=1)
    assert action.dtype == np.float32 and action.tolist() == [0.5, -0.5]


def test_scripted_agent_follows_the_teacher_and_refuses_without_one() -> None:
    space = gym.spaces.MultiDiscrete([5, 5, 5, 2])
    agent = ScriptedAgent()
    teacher = [{"teacher_action": [1, 2, 3, 1]}, {}]
    actions = acts(agent, space, streams=2, infos=teacher, calls=1)[0]
    assert actions[0].tolist() == [1, 2, 3, 1] and space.contains(actions[1])
    assert agent.readouts() == [{"refused": False}, {"refused": True}]
    assert agent.info()["follows"] == "the teacher"


def test_scripted_agent_settings_that_cannot_work_say_why() -> None:
    with pytest.raises(AgentError, match="either actions=.* or action=.*, not both"):
        ScriptedAgent(actions=[1], action=1)
    with pytest.raises(AgentError, match="empty"):
        ScriptedAgent(actions=[])
    with pytest.raises(AgentError, match=r"actions\[1\] = 7 is not in the action space Discrete\(2\)"):
        acts(ScriptedAgent(actions=[0, 7]), gym.spaces.Discrete(2))


AGENTS = """
class Good:
    def __init__(self, seed=0, lr=0.1):
        self.seed, self.lr = seed, lr
    def start(self, env, streams):
        pass
    def act(self, observations, rewards, terminated, truncated, infos):
        return [0 for _ in observations]

def make(**settings):
    return Good(**settings)

def no_act(**settings):
    class Half:
        def start(self, env, streams):
            pass
    return Half()

def broken(**settings):
    raise RuntimeError("the weights file is missing")
"""


@pytest.fixture
def agent_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "agents_here.py").write_text(AGENTS)
    (tmp_path / "needs_dep.py").write_text("import a_dependency_nobody_has\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    for name in ("agents_here", "needs_dep"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def test_a_factory_from_the_current_folder_gets_the_settings(agent_folder: Path) -> None:
    agent = load_agent("agents_here:make", {"seed": 3, "lr": 0.5})
    assert (agent.seed, agent.lr) == (3, 0.5)
    assert isinstance(load_agent("platform_sdk.agents.builtin:RandomAgent", {"seed": 2}), RandomAgent)


@pytest.mark.parametrize("spec, settings, expected", [
    ("agents_here", {}, "expected module:function"),
    ("nowhere:make", {}, "no module named 'nowhere'"),
    ("needs_dep:make", {}, "importing 'needs_dep' failed: ModuleNotFoundError"),
    ("agents_here:missing", {}, "has no 'missing'"),
    ("agents_here:make", {"speed": 1}, "the agent factory agents_here:make failed: TypeError"),
    ("agents_here:broken", {}, "failed: RuntimeError: the weights file is missing"),
    ("agents_here:no_act", {}, r"returned a Half, which has no act\(\) method"),
])
def test_agents_that_cannot_be_built_say_why(agent_folder: Path, spec: str, settings: dict, expected: str) -> None:
    with pytest.raises(AgentLoadError, match=expected):
        load_agent(spec, settings)
