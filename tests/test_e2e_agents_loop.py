"""`platform_sdk.agents.loop.run_episodes` from your own code, as the agents guide gives it (its
snippet verbatim, with its my_agent.py), and several streams: one session per stream, seeds in
the order episodes begin, and the agent's readouts recorded in each session's recording."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import platform_sdk
from platform_sdk.agents.builtin import RandomAgent, ScriptedAgent
from platform_sdk.agents.loop import run_episodes
from platform_testing.agents_guide import MY_AGENT
from platform_testing.platform import clean_env
from platform_testing.waiting import wait_for


GUIDE_LOOP = '''import platform_sdk
from platform_sdk.agents.loop import run_episodes
from my_agent import make

agent = make(seed=1)
with platform_sdk.connect("cartpole") as env:
    for record in run_episodes(agent, [env], episodes=10, seeds=range(10)):
        print(record)
'''


def test_the_guides_loop_snippet(platform_stack, tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text(MY_AGENT)
    (tmp_path / "loop.py").write_text(GUIDE_LOOP)
    done = subprocess.run([sys.executable, "loop.py"], capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp_path, env={**clean_env(), "PLATFORM_URL": platform_stack.url})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 10 and all(line.startswith("EpisodeRecord(episode=") for line in lines), lines
    assert [f"seed={i}," in line for i, line in enumerate(lines)] == [True] * 10


class Counting(RandomAgent):
    """A random agent that also reports how many decisions it made on each stream."""

    max_streams = 4

    def start(self, env, streams):  # type: ignore[no-untyped-def]
        super().start(env, streams)
        self.counts = [0] * streams

    def act(self, observations, rewards, terminated, truncated, infos):  # type: ignore[no-untyped-def]
        for i in range(len(observations)):
            self.counts[i] += 1
        return super().act(observations, rewards, terminated, truncated, infos)

    def readouts(self):  # type: ignore[no-untyped-def]
        return [{"decisions": n} for n in self.counts]


def test_several_streams_one_session_each_with_readouts_recorded(platform_stack) -> None:
    url = platform_stack.url
    envs = [platform_sdk.connect("cartpole", url=url, record=True, auto_reset=True) for _ in range(3)]
    try:
        records = list(run_episodes(Counting(seed=2), envs, episodes=9, seeds=range(100, 109)))
    finally:
        for env in envs:
            env.close()
    assert [r.episode for r in records] == list(range(1, 10))
    assert {r.stream for r in records} == {0, 1, 2}
    assert {r.session_id for r in records} == {env.session_id for env in envs}
    assert sorted(r.seed for r in records) == list(range(100, 109)), "each episode began with the next seed"
    http = httpx.Client(base_url=url, timeout=60)
    first = records[0]
    meta = wait_for(lambda: (m := http.get(f"/v0/recordings/{first.session_id}").json()).get("status") == "closed"
                    and m, timeout=60, what="the first stream's recording closed")
    assert set(meta["agent_keys"]) == {"compute_s", "decisions"}
    decisions = http.get(f"/v0/recordings/{first.session_id}/episodes/0/arrays/agent.decisions").json()["data"]
    assert decisions == list(range(1, first.steps + 1))


def test_the_scripted_agent_follows_the_teacher_of_pick_and_place(platform_stack) -> None:
    env = platform_sdk.connect("menagerie-franka-emika-panda-pick-place", url=platform_stack.url)
    try:
        records = list(run_episodes(ScriptedAgent(), [env], episodes=1, seeds=[0]))
    finally:
        env.close()
    assert records[0].success is True and records[0].terminated, records
