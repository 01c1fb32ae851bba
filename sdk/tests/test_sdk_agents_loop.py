"""`platform_sdk.agents.loop`: the interface's semantics on local Gymnasium environments (the
loop steps anything Gymnasium-like; platform sessions are in tests/test_e2e_agents_*.py):
lists per stream, None/False before the first action, final_obs and final_info when an
episode ends (plain and auto-resetting sessions), finish seeing ended streams unreset, seeds,
max_steps, readouts and compute_s as the step's agent data, refused, and the errors."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from platform_sdk.agents import AgentError, AgentLoop, EpisodeRecord, run_episodes
from platform_sdk.agents.summary import RunSummary


class Counter(gym.Env[np.ndarray, int]):
    """Observation = steps taken in the episode; ends (terminated) after `length` steps; reward 1.
    Its step takes `agent=` as platform sessions do, and keeps what it was given."""

    def __init__(self, length: int = 3, auto_reset: bool = False, endless: bool = False) -> None:
        self.observation_space = gym.spaces.Box(0, 1000, (1,), np.float64)
        self.action_space = gym.spaces.Discrete(2)
        self.length, self.auto_reset, self.endless = length, auto_reset, endless
        self.t = 0
        self.seeds: list[int | None] = []
        self.agent_data: list[dict[str, Any] | None] = []
        self.session_id = "s-counter"

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        self.seeds.append(seed)
        self.t = 0
        return np.array([0.0]), {"reset": True}

    def step(self, action: int, agent: dict[str, Any] | None = None) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.agent_data.append(agent)
        self.t += 1
        ended = self.t >= self.length
        info: dict[str, Any] = {"is_success": self.t % 2 == 1} if ended else {}
        if ended and (self.auto_reset or self.endless):
            final = np.array([float(self.t)])
            self.t = 0
            info = {"first": True, "final_obs": final, "final_info": info}
            if self.endless:
                info["restarted"] = True
                return np.array([0.0]), 1.0, False, False, info
            return np.array([0.0]), 1.0, True, False, info
        return np.array([float(self.t)]), 1.0, ended, False, info


class Recorder:
    """Keeps every call's arguments; acts 0 on every stream."""

    def __init__(self, streams: int = 1, readouts: list[dict[str, Any]] | None = None) -> None:
        self.max_streams = streams
        self.calls: list[tuple[list, list, list, list, list]] = []
        self.started: tuple[Any, int] | None = None
        self.finished: tuple[list, list, list, list, list] | None = None
        self._readouts = readouts

    def start(self, env: Any, streams: int) -> None:
        self.started = (env, streams)

    def act(self, observations, rewards, terminated, truncated, infos):  # type: ignore[no-untyped-def]
        self.calls.append(([o.copy() for o in observations], list(rewards), list(terminated), list(truncated),
                           [dict(i) for i in infos]))
        return [0 for _ in observations]

    def finish(self, observations, rewards, terminated, truncated, infos):  # type: ignore[no-untyped-def]
        self.finished = (observations, rewards, terminated, truncated, infos)


class WithReadouts(Recorder):
    def readouts(self) -> list[dict[str, Any]]:
        assert self._readouts is not None
        return self._readouts


def test_start_then_lists_per_stream_with_none_and_false_before_the_first_action() -> None:
    envs = [Counter(), Counter()]
    agent = Recorder(streams=2)
    records = list(run_episodes(agent, envs, episodes=2, seeds=[7, 8]))
    assert agent.started == (envs[0], 2)
    observations, rewards, terminated, truncated, infos = agent.calls[0]
    assert rewards == [None, None] and terminated == [False, False] and truncated == [False, False]
    assert infos == [{"reset": True}, {"reset": True}]
    assert [o.tolist() for o in observations] == [[0.0], [0.0]]
    assert agent.calls[1][1] == [1.0, 1.0]
    assert [env.seeds[0] for env in envs] == [7, 8]
    assert len(records) == 2 and all(isinstance(r, EpisodeRecord) for r in records)


def test_a_plain_session_is_reset_and_the_info_carries_final_obs_and_final_info() -> None:
    env = Counter(length=2)
    agent = Recorder()
    records = list(run_episodes(agent, [env], episodes=3, seeds=[1, 2]))
    assert env.seeds == [1, 2, None]  # the seeds in the order episodes begin, then none
    after_end = agent.calls[2]  # the decision after the first episode's last step
    assert after_end[2] == [True] and after_end[0][0].tolist() == [0.0]  # already the next episode's start
    assert after_end[4][0]["final_obs"].tolist() == [2.0]
    assert after_end[4][0]["final_info"] == {"is_success": False}
    assert after_end[4][0]["reset"] is True
    assert [(r.episode, r.steps, r.episode_return, r.seed, r.terminated) for r in records] == [
        (1, 2, 2.0, 1, True), (2, 2, 2.0, 2, True), (3, 2, 2.0, None, True)]


def test_an_auto_resetting_session_is_not_reset_again() -> None:
    env = Counter(length=3, auto_reset=True)
    agent = Recorder()
    records = list(run_episodes(agent, [env], episodes=2))
    assert env.seeds == [None]  # only the loop's first reset
    assert agent.calls[3][4][0]["final_obs"].tolist() == [3.0]
    assert [r.success for r in records] == [True, True]


def test_finish_sees_ended_streams_unreset_with_their_final_observation() -> None:
    for auto_reset in (False, True):
        env = Counter(length=3, auto_reset=auto_reset)
        agent = Recorder()
        list(run_episodes(agent, [env], episodes=1))
        assert agent.finished is not None
        observations, rewards, terminated, truncated, infos = agent.finished
        assert observations[0].tolist() == [3.0] and rewards == [1.0] and terminated == [True]
        assert infos[0] == {"is_success": True}
        assert env.seeds == [None]  # not reset after its last episode


def test_finish_shows_other_streams_mid_episode() -> None:
    envs = [Counter(length=2), Counter(length=5)]
    agent = Recorder(streams=2)
    records = list(run_episodes(agent, envs, episodes=1))
    assert [r.stream for r in records] == [0]
    assert agent.finished is not None
    assert [o.tolist() for o in agent.finished[0]] == [[2.0], [2.0]] and agent.finished[2] == [True, False]


class Interrupting(Recorder):
    """Raises KeyboardInterrupt inside its act on decision `at` (1-based)."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def act(self, observations, rewards, terminated, truncated, infos):  # type: ignore[no-untyped-def]
        actions = super().act(observations, rewards, terminated, truncated, infos)
        if len(self.calls) == self.at:
            raise KeyboardInterrupt
        return actions


def test_finish_after_a_stop_between_steps_gets_the_outcomes_no_act_saw_once() -> None:
    env = Counter(length=2)
    agent = Recorder()
    loop = AgentLoop(agent, [env])
    loop.start()
    loop.step()
    assert [r.episode for r in loop.step()] == [1]  # the episode ended; the run stops here (Ctrl-C)
    loop.finish()
    assert agent.finished is not None
    assert agent.finished[1] == [1.0] and agent.finished[2] == [True]
    assert agent.finished[0][0].tolist() == [2.0] and agent.finished[4] == [{"is_success": False}]  # its end
    agent.finished = None
    loop.finish()
    assert agent.finished is None  # called once


def test_finish_after_a_stop_inside_act_repeats_nothing_act_saw() -> None:
    agent = Interrupting(at=2)
    loop = AgentLoop(agent, [Counter(length=5)])
    loop.start()
    loop.step()
    with pytest.raises(KeyboardInterrupt):
        loop.step()
    loop.finish()
    assert agent.finished is None and agent.calls[1][1] == [1.0]  # the last outcome went to act


def test_max_steps_truncates_and_resets() -> None:
    env = Counter(length=100)
    agent = Recorder()
    records = list(run_episodes(agent, [env], episodes=2, max_steps=4))
    assert [(r.steps, r.truncated, r.terminated) for r in records] == [(4, True, False), (4, True, False)]
    assert agent.calls[4][3] == [True] and agent.calls[4][4][0]["final_obs"].tolist() == [4.0]
    assert len(env.seeds) == 2


def test_endless_restarts_are_episodes_neither_terminated_nor_truncated() -> None:
    env = Counter(length=2, endless=True)
    records = list(run_episodes(Recorder(), [env], episodes=2))
    assert [(r.terminated, r.truncated, r.restarted) for r in records] == [(False, False, True)] * 2


def test_compute_s_is_the_steps_agent_data_unless_readouts_report_it() -> None:
    env = Counter(length=2)
    list(run_episodes(Recorder(), [env], episodes=1))
    assert all(set(data or {}) == {"compute_s"} and data["compute_s"] >= 0 for data in env.agent_data)
    env = Counter(length=2)
    agent = WithReadouts(readouts=[{"q": 0.5, "compute_s": 9.0, "refused": True}])
    loop = AgentLoop(agent, [env], episodes=1)
    loop.start()
    while not loop.done:
        loop.step()
    assert env.agent_data == [{"q": 0.5, "compute_s": 9.0, "refused": True}] * 2
    assert loop.refused == 2 and loop.decisions == 2


def test_settle_and_wait_steps_are_summed_per_decision_that_reported_them() -> None:
    """The work measures with a set meaning: kept per decision, averaged over those that gave
    them, and in the run summary only when reported (a bool, a list or a NaN is no measure)."""
    env = Counter(length=4)
    agent = WithReadouts(readouts=[{"settle_steps": 3, "wait_steps": 1.5}])
    loop = AgentLoop(agent, [env], episodes=1)
    loop.start()
    loop.step()
    assert loop.step_work == [{"settle_steps": 3.0, "wait_steps": 1.5}]
    agent._readouts = [{"settle_steps": 5}]
    loop.step()
    agent._readouts = [{"settle_steps": True, "wait_steps": float("nan")}]
    loop.step()
    assert loop.step_work == [{}]
    assert loop.work_per_decision() == {"settle_steps": 4.0, "wait_steps": 1.5}
    summary = json.loads(RunSummary(env="counter").as_json(loop, endless=False, total_reward=3.0))
    assert (summary["settle_steps_per_decision"], summary["wait_steps_per_decision"]) == (4.0, 1.5)
    plain = AgentLoop(Recorder(), [Counter(length=2)], episodes=1)
    plain.start()
    plain.step()
    assert plain.work_per_decision() == {}
    assert "settle_steps_per_decision" not in json.loads(RunSummary(env="counter").as_json(plain, False, 1.0))


def test_an_env_whose_step_takes_no_agent_data_is_stepped_plainly() -> None:
    env = gym.make("CartPole-v1")
    records = list(run_episodes(Recorder(), [env], episodes=1, seeds=[0]))
    assert records[0].steps > 0 and records[0].session_id is None


@pytest.mark.parametrize("make, match", [
    (lambda: (Recorder(streams=1), [Counter(), Counter()]), r"drives at most 1 stream\(s\) \(its max_streams\), got 2"),
    (lambda: (Recorder(), []), "at least one session"),
])
def test_streams_beyond_max_streams_are_refused(make: Any, match: str) -> None:
    agent, envs = make()
    with pytest.raises(AgentError, match=match):
        AgentLoop(agent, envs)


def test_wrong_answers_name_what_to_fix() -> None:
    class TwoActions(Recorder):
        def act(self, *args: Any) -> list[int]:
            return [0, 1]

    loop = AgentLoop(TwoActions(), [Counter()])
    loop.start()
    with pytest.raises(AgentError, match=r"TwoActions.act returned 2 action\(s\) for 1 stream\(s\)"):
        loop.step()
    loop = AgentLoop(WithReadouts(readouts={"q": 1}), [Counter()])  # type: ignore[arg-type]
    loop.start()
    with pytest.raises(AgentError, match=r"readouts\(\) must return a list of 1 dict\(s\), one per stream"):
        loop.step()


def test_stopping_the_iteration_early_still_finishes() -> None:
    agent = Recorder()
    episodes = run_episodes(agent, [Counter(length=2)])
    first = next(episodes)
    episodes.close()
    assert first.episode == 1 and agent.finished is not None
