"""`python -m platform_sdk.agents.run` as a real process against the whole platform, as the
agents guide gives it: the guide's my_agent.py and command line verbatim (log lines, the JSON
summary, a recording with frames and compute_s), a learning agent that improves over episodes
and resumes from --save/--load, Ctrl-C saving what it learned, --save-every, readouts and
refused in the recording and the summary, --max-steps, --config, endless runs with --window,
lives (one writer at a time) and the errors (one line, the exit code saying how it ended)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from platform_testing.agents_guide import MY_AGENT
from platform_testing.platform import clean_env
from platform_testing.waiting import wait_for


# A linear policy improved by hill climbing: each episode tries the best weights so far plus
# noise and keeps them when the return is at least as good. It learns only from what act() and
# finish() are given, and save/load keep the best weights and return.
HILL_CLIMBER = '''
import json
import numpy as np


class HillClimber:
    def __init__(self, seed=0, noise=0.5):
        self.rng = np.random.default_rng(seed)
        self.noise = noise
        self.best = np.array([0.0, 0.0, 0.0, -1.0])  # starts pushing the wrong way: ~10 steps
        self.best_return = -1.0
        self.trial = self.best.copy()
        self.episode_return = 0.0
        self.episodes = 0
        self.loaded = None

    def start(self, env, streams):
        assert env.env == "cartpole" and streams == 1, (env.env, streams)
        self.trial = self.best + self.noise * self.rng.normal(size=4)

    def _outcome(self, reward, ended):
        if reward is not None:
            self.episode_return += reward
        if ended:
            self.episodes += 1
            if self.episode_return >= self.best_return:
                self.best, self.best_return = self.trial, self.episode_return
            self.trial = self.best + self.noise * self.rng.normal(size=4)
            self.episode_return = 0.0

    def act(self, observations, rewards, terminated, truncated, infos):
        self._outcome(rewards[0], terminated[0] or truncated[0])
        return [int(np.dot(self.trial, observations[0]) > 0)]

    def finish(self, observations, rewards, terminated, truncated, infos):
        self._outcome(rewards[0], terminated[0] or truncated[0])

    def readouts(self):
        return [{"best_return": self.best_return, "weights": self.trial.tolist()}]

    def save(self, path):
        with open(path, "w") as f:
            json.dump({"best": self.best.tolist(), "best_return": self.best_return, "episodes": self.episodes}, f)

    def load(self, path):
        with open(path) as f:
            saved = json.load(f)
        self.best, self.best_return = np.array(saved["best"]), saved["best_return"]
        self.trial = self.best.copy()
        self.loaded = saved["episodes"]

    def info(self):
        return {"best_return": self.best_return, "loaded_after_episodes": self.loaded}


def make(**settings):
    return HillClimber(**settings)


class Refuser:
    """Declines every third decision (and says so), pushes right otherwise."""

    def start(self, env, streams):
        self.n = 0

    def act(self, observations, rewards, terminated, truncated, infos):
        self.n += 1
        return [1]

    def readouts(self):
        return [{"refused": self.n % 3 == 0, "confidence": 0.5}]


def refuser(**settings):
    return Refuser()
'''

EPISODE = re.compile(r"^episode (\d+): (\d+) steps, return (\S+), (terminated|truncated|restarted|ended)(, success (yes|no))?$")
WINDOW = re.compile(r"^steps (\d+)-(\d+): mean reward (\S+) per step, (\d+) restarts?$")
START = re.compile(r"^session (s-\S+) \((\S+)\) (started|at saved snapshot \S+)(, recording)?(, life \S+)?$")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "platform_sdk.agents.run", *args]


def environment(url: str) -> dict[str, str]:
    return {**clean_env(), "PLATFORM_URL": url}


def run(url: str, *args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd,
                          env=environment(url))


def summary_of(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def episodes_of(stdout: str) -> list[re.Match[str]]:
    return [m for line in stdout.splitlines() if (m := EPISODE.match(line))]


def closed_recording(http: httpx.Client, session_id: str, episodes: int) -> dict:
    return wait_for(lambda: (m := http.get(f"/v0/recordings/{session_id}").json()).get("status") == "closed"
                    and len(m.get("episodes", [])) >= episodes and m, timeout=60,
                    what=f"recording {session_id} closed with {episodes} episodes")


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    (tmp_path / "my_agent.py").write_text(MY_AGENT)
    (tmp_path / "learner.py").write_text(HILL_CLIMBER)
    return tmp_path


def test_the_guides_agent_and_command_line(platform_stack, agents):
    url = platform_stack.url
    done = run(url, "--agent", "my_agent:make", "--env", "cartpole", "--episodes", "20", "--record", cwd=agents)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    start = START.match(lines[0])
    assert start and start[2] == "cartpole" and start[4] == ", recording", lines[0]
    episodes = episodes_of(done.stdout)
    assert [int(m[1]) for m in episodes] == list(range(1, 21)) and len(lines) == 22, lines
    summary = summary_of(done.stdout)
    steps = [int(m[2]) for m in episodes]
    assert summary["ended"] == "completed" and summary["episodes"] == 20 and summary["steps"] == sum(steps)
    assert summary["mean_return"] == pytest.approx(sum(float(m[3]) for m in episodes) / 20)
    assert summary["success_rate"] is None and summary["refused"] == 0 and summary["agent"] == {}
    assert 0 < summary["compute_s_per_decision"] < 0.1
    session_id = start[1]
    assert summary["recording_id"] == session_id
    assert summary["replay"] == f"{url}/recordings/{session_id}"

    http = httpx.Client(base_url=url, timeout=60)
    meta = closed_recording(http, session_id, 20)
    assert [e["length"] for e in meta["episodes"][:20]] == steps
    assert meta["agent_keys"] == ["compute_s"]
    compute = http.get(f"/v0/recordings/{session_id}/episodes/0/arrays/agent.compute_s").json()
    assert compute["shape"] == [steps[0]] and all(0 <= s < 1 for s in compute["data"])
    frame = http.get(f"/v0/recordings/{session_id}/episodes/0/frames/{steps[0]}")
    assert frame.status_code == 200 and frame.content[:2] == b"\xff\xd8", "--record keeps frames"


def test_a_learning_agent_improves_saves_and_resumes(platform_stack, agents):
    url = platform_stack.url
    checkpoint = agents / "agent.ckpt"
    done = run(url, "--agent", "learner:make", "--env", "cartpole", "--episodes", "40", "--seed", "0",
               "--save", str(checkpoint), "--save-every", "10", cwd=agents)
    assert done.returncode == 0, done.stderr
    returns = [float(m[3]) for m in episodes_of(done.stdout)]
    assert len(returns) == 40
    first, last = sum(returns[:10]) / 10, sum(returns[-10:]) / 10
    assert last > 2 * first and last > 200, returns
    saves = [line for line in done.stdout.splitlines() if line.startswith("saved the agent to")]
    assert len(saves) == 4 and saves[0].startswith(f"saved the agent to {checkpoint} after 10 episodes, "), saves
    summary = summary_of(done.stdout)
    saved = json.loads(checkpoint.read_text())
    assert summary["saved"] == str(checkpoint) and saved["episodes"] == 40
    assert summary["agent"]["best_return"] == saved["best_return"] == max(returns)

    resumed = run(url, "--agent", "learner:make", "--env", "cartpole", "--episodes", "5", "--seed", "0",
                  "--load", str(checkpoint), cwd=agents)
    assert resumed.returncode == 0, resumed.stderr
    again = [float(m[3]) for m in episodes_of(resumed.stdout)]
    assert summary_of(resumed.stdout)["agent"]["loaded_after_episodes"] == 40
    assert sum(again) / 5 > 2 * first, (again, returns[:10])  # it starts where it left off


def test_ctrl_c_saves_what_was_learned(platform_stack, agents):
    checkpoint = agents / "interrupted.ckpt"
    runner = subprocess.Popen(command("--agent", "learner:make", "--env", "cartpole", "--episodes", "100000",
                                      "--save", str(checkpoint)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=agents,
                              env=environment(platform_stack.url), preexec_fn=_default_sigint)  # noqa: PLW1509
    try:
        seen = 0
        while seen < 3:
            line = runner.stdout.readline()
            assert line, f"the run ended: {runner.wait()} {runner.stderr.read()}"
            seen += bool(EPISODE.match(line.strip()))
        runner.send_signal(signal.SIGINT)
        out, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert runner.returncode == 130, err
    err_lines = err.strip().splitlines()
    assert len(err_lines) == 1 and err_lines[0].startswith("platform-agent: interrupted: session s-"), err_lines
    assert err_lines[0].endswith(f"; the agent is saved in {checkpoint}")
    summary = summary_of(out)
    assert summary["ended"] == "interrupted" and summary["saved"] == str(checkpoint)
    assert json.loads(checkpoint.read_text())["episodes"] >= 3


def test_readouts_and_refusals_are_recorded_and_counted(platform_stack, agents):
    url = platform_stack.url
    done = run(url, "--agent", "learner:refuser", "--env", "cartpole", "--episodes", "2", "--max-steps", "6",
               "--record", cwd=agents)
    assert done.returncode == 0, done.stderr
    episodes = episodes_of(done.stdout)
    assert [(int(m[2]), m[4]) for m in episodes] == [(6, "truncated"), (6, "truncated")], done.stdout
    summary = summary_of(done.stdout)
    assert summary["refused"] == summary["steps"] // 3
    session_id = summary["recording_id"]
    http = httpx.Client(base_url=url, timeout=60)
    meta = closed_recording(http, session_id, 2)
    assert set(meta["agent_keys"]) == {"compute_s", "confidence", "refused"}
    refused = http.get(f"/v0/recordings/{session_id}/episodes/0/arrays/agent.refused").json()["data"]
    assert [bool(v) for v in refused] == [(i + 1) % 3 == 0 for i in range(len(refused))]
    assert http.get(f"/v0/recordings/{session_id}/episodes/0/arrays/agent.compute_s").json()["shape"] == [len(refused)]


def test_config_gives_the_factory_its_settings(platform_stack, agents):
    config = agents / "settings.json"
    config.write_text(json.dumps({"seed": 5, "noise": 0.0}))
    done = run(platform_stack.url, "--agent", "learner:make", "--env", "cartpole", "--episodes", "3",
               "--config", str(config), cwd=agents)
    assert done.returncode == 0, done.stderr
    assert summary_of(done.stdout)["agent"]["best_return"] > 0
    wrong = agents / "wrong.json"
    wrong.write_text(json.dumps({"speed": 1}))
    bad = run(platform_stack.url, "--agent", "learner:make", "--env", "cartpole", "--config", str(wrong), cwd=agents)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "platform-agent: error: argument --agent: the agent factory learner:make failed: TypeError: "
        "HillClimber.__init__() got an unexpected keyword argument 'speed'"]


def test_endless_logs_a_line_per_window_and_saves_every_n_windows(platform_stack, agents):
    checkpoint = agents / "endless.ckpt"
    done = run(platform_stack.url, "--agent", "learner:make", "--env", "cartpole", "--endless", "--steps", "3000",
               "--window", "1000", "--save", str(checkpoint), "--save-every", "2", "--record", cwd=agents)
    assert done.returncode == 0, done.stderr
    windows = [m for line in done.stdout.splitlines() if (m := WINDOW.match(line))]
    assert [(int(m[1]), int(m[2])) for m in windows] == [(1, 1000), (1001, 2000), (2001, 3000)], done.stdout
    assert not episodes_of(done.stdout), "an endless run logs windows, not episodes"
    assert len([line for line in done.stdout.splitlines() if line.startswith("saved the agent")]) == 1
    summary = summary_of(done.stdout)
    assert summary["steps"] == 3000 and summary["restarts"] == summary["episodes"] == sum(int(m[4]) for m in windows)
    assert summary["mean_return"] is None and summary["mean_reward_per_step"] == pytest.approx(1.0)
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    meta = closed_recording(http, summary["recording_id"], 3)
    lengths = [e["length"] for e in meta["episodes"]]
    assert lengths == [1000, 1000, 1000], lengths  # files of 1,000 steps; a restart stays inside its file
    assert sum(e["restarts"] for e in meta["episodes"]) == summary["restarts"]


def test_errors_say_how_the_run_ended(platform_stack, agents):
    url = platform_stack.url
    unknown = run(url, "--agent", "my_agent:make", "--env", "no-such-env", cwd=agents)
    assert unknown.returncode == 1
    lines = unknown.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("platform-agent: error: no-such-env (no session started): ")
    assert "unknown environment 'no-such-env'" in lines[0] and "Traceback" not in unknown.stderr
    assert summary_of(unknown.stdout)["ended"] == "platform error"

    no_save = run(url, "--agent", "my_agent:make", "--env", "cartpole", "--save", "x.ckpt", cwd=agents)
    assert no_save.returncode == 2 and no_save.stderr.strip().splitlines() == [
        "platform-agent: error: argument --save: MyAgent has no save(path) method"]

    (agents / "crashing.py").write_text(MY_AGENT + "\n\ndef broken(**s):\n    a = MyAgent()\n"
                                        "    a.act = lambda *args: 1 / 0\n    return a\n")
    crashed = run(url, "--agent", "crashing:broken", "--env", "cartpole", cwd=agents)
    assert crashed.returncode == 3 and "Traceback" in crashed.stderr
    assert crashed.stderr.strip().splitlines()[-1].startswith("platform-agent: error: session s-")
    assert crashed.stderr.strip().splitlines()[-1].endswith("(cartpole), step 1: ZeroDivisionError: division by zero")
    assert summary_of(crashed.stdout)["ended"] == "agent error"


def test_a_life_has_one_writer_at_a_time(platform_stack, agents):
    url = platform_stack.url
    life = ["--record", "--life", "robot-1", "--max-frames", "200"]
    holder = subprocess.Popen(command("--agent", "my_agent:make", "--env", "cartpole", "--endless", *life),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=agents,
                              env=environment(url), preexec_fn=_default_sigint)  # noqa: PLW1509
    try:
        start = START.match(holder.stdout.readline().strip())
        assert start and start[5] == ", life robot-1", holder.poll()
        refused = run(url, "--agent", "my_agent:make", "--env", "cartpole", *life, cwd=agents)
        assert refused.returncode == 1
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and f"life robot-1 is being recorded by session {start[1]}" in lines[0], lines
        holder.send_signal(signal.SIGINT)
        out, _ = holder.communicate(timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert holder.returncode == 130 and summary_of(out)["life"] == "robot-1"
    again = run(url, "--agent", "my_agent:make", "--env", "cartpole", "--episodes", "2", *life, cwd=agents)
    assert again.returncode == 0, again.stderr
    http = httpx.Client(base_url=url, timeout=60)
    meta = closed_recording(http, summary_of(again.stdout)["recording_id"], 2)
    assert meta["life"] == "robot-1"


def test_from_a_saved_environment_snapshot(platform_stack, agents):
    import platform_sdk

    url = platform_stack.url
    with platform_sdk.connect("cartpole", url=url) as env:
        env.reset(seed=3)
        for _ in range(5):
            env.step(0)
        saved = env.save_snapshot("five steps in")
    done = run(url, "--agent", "my_agent:make", "--from-saved-snapshot", saved["id"], "--steps", "4", cwd=agents)
    assert done.returncode == 0, done.stderr
    start = START.match(done.stdout.splitlines()[0])
    assert start and start[2] == "cartpole" and start[3] == f"at saved snapshot {saved['id']}", done.stdout
    assert summary_of(done.stdout)["steps"] == 4
    wrong = run(url, "--agent", "my_agent:make", "--env", "acrobot", "--from-saved-snapshot", saved["id"], cwd=agents)
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines() == [
        f"platform-agent: error: acrobot (no session started): snapshot {saved['id']} is of cartpole, not acrobot"]
