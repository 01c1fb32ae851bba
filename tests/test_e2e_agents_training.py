"""The run command's training mode as a real process against the whole platform: greedy test
episodes every K (recorded with agent.test_episode), an epsilon schedule handed to the agent,
the goal over a window of test scores, checkpoints and --resume after the runner is SIGKILLed,
and every episode's score and the test scores in a training run (`/v0/runs`)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import clean_env
from platform_testing.waiting import wait_for

# Greedy, it balances CartPole for the whole 500 steps (push toward where the pole is falling);
# training, it explores with the epsilon the runner hands it. It keeps what the runner told it.
BALANCER = '''
import json
import numpy as np


class Balancer:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.training = True
        self.epsilon = 0.0
        self.told = []  # ("training", bool) and ("epsilon", value), in order
        self.episodes = 0
        self.loaded_episodes = None

    def start(self, env, streams):
        pass

    def set_training(self, training):
        self.training = training
        self.told.append(["training", training])

    def set_epsilon(self, epsilon):
        self.epsilon = epsilon
        self.told.append(["epsilon", epsilon])

    def act(self, observations, rewards, terminated, truncated, infos):
        if terminated[0] or truncated[0]:
            self.episodes += 1
        if self.training and self.rng.random() < self.epsilon:
            return [int(self.rng.integers(2))]
        o = observations[0]
        return [int(o[2] + 0.5 * o[3] > 0)]

    def save(self, path):
        with open(path, "w") as f:
            json.dump({"episodes": self.episodes, "told": self.told}, f)

    def load(self, path):
        with open(path) as f:
            self.loaded_episodes = json.load(f)["episodes"]

    def info(self):
        return {"told": self.told, "loaded_episodes": self.loaded_episodes}


def make(**settings):
    return Balancer(**settings)


class Plain:
    def start(self, env, streams):
        pass

    def act(self, observations, rewards, terminated, truncated, infos):
        return [0]


def plain(**settings):
    return Plain()
'''

EPISODE = re.compile(r"^episode (\d+)( \(test\))?: (\d+) steps, return (\S+), \w+(; test mean (\S+) over (\d+))?$")


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "platform_sdk.agents.run", *args]


def run(url: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=240, check=False, cwd=cwd,
                          env={**clean_env(), "PLATFORM_URL": url})


def episodes_of(stdout: str) -> list[re.Match[str]]:
    return [m for line in stdout.splitlines() if (m := EPISODE.match(line))]


def summary_of(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    (tmp_path / "balancer.py").write_text(BALANCER)
    return tmp_path


def series(http: httpx.Client, run_id: str, name: str) -> list[tuple[int, float]]:
    data = http.get(f"/v0/runs/{run_id}/metrics", params={"names": name}).json()["series"].get(name)
    return list(zip(data["step"], data["value"], strict=True)) if data else []


def test_the_goal_is_reached_over_test_episodes_and_everything_goes_into_a_run(platform_stack, agents):
    url = platform_stack.url
    done = run(url, "--agent", "balancer:make", "--env", "cartpole", "--test-every", "2", "--window", "3",
               "--reward-goal", "400", "--epsilon", "exp:1.0,0.05,0.5", "--episodes", "40", "--record",
               "--run", "balancer-goal", "--seed", "3", cwd=agents)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    episodes = episodes_of(done.stdout)
    assert [int(m[1]) for m in episodes] == [1, 2, 3, 4, 5, 6], done.stdout
    assert [bool(m[2]) for m in episodes] == [False, True] * 3
    assert [int(m[3]) for m in episodes if m[2]] == [500, 500, 500]  # greedy: the whole episode
    assert [(m[6], m[7]) for m in episodes if m[2]] == [("500", "1"), ("500", "2"), ("500", "3")]
    assert "goal reached at episode 6: test mean 500 over the last 3 test episodes >= 400" in lines
    summary = summary_of(done.stdout)
    training = summary["training"]
    assert (training["goal_reached_at"], training["episodes"], training["test_episodes"]) == (6, 6, 3)
    # told before each episode: training with the schedule's epsilon by training episode, tests greedy
    told = summary["agent"]["told"]
    assert told[:4] == [["training", True], ["epsilon", 1.0], ["training", False], ["epsilon", 0.0]]
    assert [value for what, value in told if what == "epsilon"][:6] == [1.0, 0.0, 0.5, 0.0, 0.25, 0.0]

    http = httpx.Client(base_url=url, timeout=30)
    run_id = training["run_id"]
    stored = wait_for(lambda: (r := http.get(f"/v0/runs/{run_id}").json()).get("state") == "finished" and r,
                      timeout=30, what=f"run {run_id} finished")
    assert stored["name"] == "balancer-goal" and stored["seed"] == 3 and stored["hparams"]["reward_goal"] == 400
    assert stored["session_ids"] == [summary["session_id"]] and stored["recording_ids"] == [summary["session_id"]]
    assert stored["summary"]["goal_reached_at"] == 6
    assert [step for step, _ in series(http, run_id, "episode/score")] == [1, 2, 3, 4, 5, 6]
    assert series(http, run_id, "test/score") == [(2, 500.0), (4, 500.0), (6, 500.0)]
    assert series(http, run_id, "test/avg_score") == [(2, 500.0), (4, 500.0), (6, 500.0)]
    assert series(http, run_id, "episode/epsilon")[:3] == [(1, 1.0), (2, 0.0), (3, 0.5)]

    # the recording marks the test episodes' steps
    meta = wait_for(lambda: (m := http.get(f"/v0/recordings/{summary['session_id']}").json()).get("status")
                    == "closed" and m, timeout=60, what="the recording closed")
    assert "test_episode" in meta["agent_keys"]
    marks = [http.get(f"/v0/recordings/{summary['session_id']}/episodes/{i}/arrays/agent.test_episode").json()["data"]
             for i in range(2)]
    assert set(marks[0]) == {0} and set(marks[1]) == {1}


def test_resume_after_the_runner_is_killed_continues_the_same_run(platform_stack, agents):
    url = platform_stack.url
    save = agents / "balancer.ckpt"
    options = ("--agent", "balancer:make", "--env", "cartpole", "--test-every", "3", "--epsilon", "0.5",
               "--episodes", "12", "--checkpoint-every", "4", "--save", str(save), "--run", "resumed")
    runner = subprocess.Popen(command(*options, "--resume"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=agents, env={**clean_env(), "PLATFORM_URL": url})
    try:
        seen = []
        while True:
            line = runner.stdout.readline()
            assert line, f"the run ended: {runner.wait()} {runner.stderr.read()}"
            seen.append(line.strip())
            if line.startswith("checkpoint after episode 4"):
                break
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert any(line.startswith("no checkpoint at") for line in seen)
    run_id = next(line.split()[2].rstrip(":") for line in seen if line.startswith("training run "))
    state = json.loads((agents / "balancer.ckpt.runner.json").read_text())
    assert (state["episodes"], state["run_id"]) == (4, run_id)

    done = run(url, *options, "--resume", cwd=agents)
    assert done.returncode == 0, done.stderr
    assert "resuming from the checkpoint after episode 4 (" in done.stdout
    assert [int(m[1]) for m in episodes_of(done.stdout)] == list(range(5, 13))
    summary = summary_of(done.stdout)
    assert summary["training"]["run_id"] == run_id and summary["training"]["episodes"] == 12
    # the agent continued from its checkpoint, saved when episode 4 ended: its act had seen 3 ends
    # (an outcome reaches the agent with its next act)
    assert summary["agent"]["loaded_episodes"] == 3
    http = httpx.Client(base_url=url, timeout=30)
    wait_for(lambda: http.get(f"/v0/runs/{run_id}").json().get("state") == "finished", timeout=30,
             what=f"run {run_id} finished")
    assert [step for step, _ in series(http, run_id, "episode/score")] == list(range(1, 13))
    assert [step for step, _ in series(http, run_id, "test/score")] == [3, 6, 9, 12]
    assert len(http.get(f"/v0/runs/{run_id}").json()["session_ids"]) == 2  # the session before and after


def test_training_options_are_checked_together(platform_stack, agents):
    url = platform_stack.url
    cases = [
        (("--reward-goal", "10"), "argument --reward-goal: the goal is over test episodes: give --test-every K"),
        (("--resume",), "argument --resume: needs --save PATH"),
        (("--epsilon", "linear:1,0"), "argument --epsilon: schedule 'linear:1,0'"),
        (("--test-every", "2", "--endless", "--steps", "5"), "argument --endless: the training mode"),
    ]
    for extra, message in cases:
        done = run(url, "--agent", "balancer:make", "--env", "cartpole", *extra, cwd=agents)
        assert done.returncode == 2 and message in done.stderr, (extra, done.stderr)
    plain = run(url, "--agent", "balancer:plain", "--env", "cartpole", "--test-every", "2", cwd=agents)
    assert plain.returncode == 2
    assert plain.stderr.strip() == ("platform-agent: error: argument --test-every: Plain has no set_training(bool) "
                                    "method (told False for a greedy test episode)")
