"""`python -m platform_sdk.agents.run` as a real process against the whole platform: recorded
runs (progress lines, the recording listed by GET /v0/recordings, the agent's compute time),
errors (one line, exit 1), a `module:factory` agent from the current folder, endless runs,
saved snapshots and --resume, lives (one writer at a time, naming the holder) and Ctrl-C."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from platform_testing.platform import clean_env
from platform_testing.waiting import wait_for

START = re.compile(r"^session (s-\S+) \((\S+)\) (started|resumed at snapshot \S+)(, recording)?(, life \S+)?$")
EPISODE = re.compile(r"^episode (\d+): (\d+) steps, return (\S+)$")
DONE = re.compile(r"^done: (\d+) steps, (\d+) episodes, ([\d.]+) steps/s, session (s-\S+)(?:, life (\S+))?$")
SNAPSHOT = re.compile(r"^snapshot (\S+) saved at step (\d+) \(go on with --resume \1\)$")

BALANCER = """
class Balancer:
    \"\"\"Pushes toward where the pole falls: keeps CartPole up for hundreds of steps.\"\"\"

    def __init__(self, env):
        self.n_actions = env.action_space.n
        self.episodes = 0

    def reset(self):
        self.episodes += 1

    def act(self, observation):
        return int(observation[2] + 0.5 * observation[3] > 0)


def make(env):
    return Balancer(env)
"""


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def agent_command(url: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "platform_sdk.agents.run", *args[:1], "--url", url, *args[1:]]


def run_agent(url: str, *args: str, cwd: Path | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(agent_command(url, *args), capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=cwd, env=clean_env())


def parsed(stdout: str) -> tuple[re.Match[str], list[tuple[int, float]], re.Match[str]]:
    """(the start line, [(steps, return) per episode], the summary line); no other lines."""
    lines = stdout.strip().splitlines()
    start, done = START.match(lines[0]), DONE.match(lines[-1])
    assert start and done, lines
    episodes = [EPISODE.match(line) for line in lines[1:-1]]
    assert all(episodes), lines
    assert [int(m[1]) for m in episodes] == list(range(1, len(episodes) + 1))
    return start, [(int(m[2]), float(m[3])) for m in episodes], done


def closed_recording(http: httpx.Client, session_id: str, episodes: int) -> dict:
    return wait_for(lambda: (m := http.get(f"/v0/recordings/{session_id}").json()).get("status") == "closed"
                    and len(m.get("episodes", [])) >= episodes and m, timeout=60,
                    what=f"recording {session_id} closed with {episodes} episodes")


def test_a_recorded_random_run_prints_its_episodes_and_is_listed(platform_stack):
    url = platform_stack.url
    done = run_agent(url, "cartpole", "--episodes", "3", "--record", "--seed", "0")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    start, episodes, summary = parsed(done.stdout)
    session_id = start[1]
    assert (start[2], start[3], start[4], start[5]) == ("cartpole", "started", ", recording", None)
    assert len(episodes) == 3 and all(steps > 0 and ret == steps for steps, ret in episodes)
    assert int(summary[1]) == sum(steps for steps, _ in episodes) and summary[2] == "3"
    assert float(summary[3]) > 0 and summary[4] == session_id and summary[5] is None

    http = httpx.Client(base_url=url, timeout=60)
    assert http.get(f"/v0/sessions/{session_id}").json()["state"] == "closed"
    meta = closed_recording(http, session_id, 3)
    assert [e["length"] for e in meta["episodes"][:3]] == [steps for steps, _ in episodes]
    assert all(e["length"] == 0 for e in meta["episodes"][3:]), "only the auto-reset's start may follow"
    assert "compute_s" in meta["agent_keys"]
    listed = http.get("/v0/recordings", params={"session_id": session_id}).json()["data"]
    assert [r["id"] for r in listed] == [session_id] and listed[0]["env_id"] == "cartpole"
    compute = http.get(f"/v0/recordings/{session_id}/episodes/0/arrays/agent.compute_s").json()
    assert compute["shape"] == [episodes[0][0]] and all(0 <= s < 1 for s in compute["data"])

    again = run_agent(url, "cartpole", "--episodes", "3", "--seed", "0")
    assert again.returncode == 0, again.stderr
    assert parsed(again.stdout)[1] == episodes, "a seed repeats the run"


def test_errors_are_one_line_and_exit_1(platform_stack):
    unknown = run_agent(platform_stack.url, "no-such-env", "--episodes", "1")
    assert unknown.returncode == 1 and unknown.stdout == ""
    lines = unknown.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("platform-agent: error: no-such-env (no session started): ")
    assert "unknown environment 'no-such-env'" in lines[0]

    bad_kwargs = run_agent(platform_stack.url, "cartpole", "--kwargs", '{"gravity_well": 3}')
    assert bad_kwargs.returncode == 1 and len(bad_kwargs.stderr.strip().splitlines()) == 1, bad_kwargs.stderr
    assert bad_kwargs.stderr.startswith("platform-agent: error: cartpole (no session started): ")
    assert "Traceback" not in bad_kwargs.stderr


def test_a_module_factory_agent_from_the_current_folder(platform_stack, tmp_path):
    (tmp_path / "balance_agent.py").write_text(BALANCER)
    done = run_agent(platform_stack.url, "cartpole", "--agent", "balance_agent:make", "--episodes", "2",
                     "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    _, episodes, summary = parsed(done.stdout)
    assert len(episodes) == 2 and all(steps >= 150 for steps, _ in episodes), episodes  # random: ~20
    assert summary[2] == "2"

    broken = run_agent(platform_stack.url, "cartpole", "--agent", "balance_agent:make_agent", cwd=tmp_path)
    assert broken.returncode == 2 and broken.stdout == ""
    module = tmp_path / "balance_agent.py"
    assert broken.stderr.strip().splitlines() == [
        f"platform-agent: error: argument --agent: module 'balance_agent' ({module}) has no 'make_agent' (see --help)"
    ]


def test_endless_steps_save_snapshots_and_resume(platform_stack):
    url = platform_stack.url
    done = run_agent(url, "cartpole", "--endless", "--steps", "300", "--save-every", "100", "--seed", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    snapshots = [m for line in lines if (m := SNAPSHOT.match(line))]
    assert [int(m[2]) for m in snapshots] == [100, 200, 300]
    episodes = [m for line in lines if EPISODE.match(line)]
    summary = DONE.match(lines[-1])
    assert summary and summary[1] == "300" and int(summary[2]) == len(episodes) > 3, lines  # restarts count
    last = snapshots[-1][1]

    resumed = run_agent(url, "cartpole", "--resume", last, "--steps", "20")
    assert resumed.returncode == 0, resumed.stderr
    start = START.match(resumed.stdout.splitlines()[0])
    assert start and start[3] == f"resumed at snapshot {last}"
    assert DONE.match(resumed.stdout.strip().splitlines()[-1])[1] == "20"

    wrong = run_agent(url, "acrobot", "--resume", last)
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines() == [
        f"platform-agent: error: acrobot (no session started): snapshot {last} is of cartpole, not acrobot"
    ]


def test_a_life_has_one_writer_and_ctrl_c_closes_the_session(platform_stack):
    url = platform_stack.url
    http = httpx.Client(base_url=url, timeout=60)
    life = ["--record", "--life", "robot-1", "--max-frames", "200"]
    # SIGINT as a terminal gives it: the default action, even where this test runs from a shell that
    # started it in the background (which ignores SIGINT, and a child inherits that).
    holder = subprocess.Popen(agent_command(url, "cartpole", "--steps", "1000000", *life),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(),
                              preexec_fn=_default_sigint)  # noqa: PLW1509 - one signal call, before exec
    try:
        first = holder.stdout.readline()
        start = START.match(first.strip())
        assert start and start[5] == ", life robot-1", (first, holder.poll())
        holder_id = start[1]

        refused = run_agent(url, "cartpole", "--episodes", "1", *life)
        assert refused.returncode == 1 and refused.stdout == ""
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith("platform-agent: error: cartpole (no session started): ")
        assert f"life robot-1 is being recorded by session {holder_id}" in lines[0]

        while not EPISODE.match(line := holder.stdout.readline().strip()):  # it is stepping
            assert line, f"the holder ended: {holder.wait()}"
        holder.send_signal(signal.SIGINT)
        out, err = holder.communicate(timeout=60)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert holder.returncode == 130, err
    err_lines = err.strip().splitlines()
    assert len(err_lines) == 1 and err_lines[0].startswith(f"platform-agent: interrupted: session {holder_id} ")
    assert err_lines[0].endswith("; the session is closed")
    summary = DONE.match(out.strip().splitlines()[-1])
    assert summary and summary[4] == holder_id and summary[5] == "robot-1" and int(summary[1]) > 0
    assert http.get(f"/v0/sessions/{holder_id}").json()["state"] == "closed"

    sessions = [holder_id]
    for _ in range(2):  # consecutive runs take the life in turn
        done = run_agent(url, "cartpole", "--episodes", "2", "--seed", "4", *life)
        assert done.returncode == 0, done.stderr
        start, episodes, summary = parsed(done.stdout)
        assert start[5] == ", life robot-1" and summary[5] == "robot-1" and len(episodes) == 2
        sessions.append(start[1])
    for session_id in sessions:
        closed_recording(http, session_id, 1)


def test_runs_with_a_life_append_to_it(platform_stack):
    url = platform_stack.url
    http = httpx.Client(base_url=url, timeout=60)
    runs = []
    for episodes in ("2", "1"):
        done = run_agent(url, "cartpole", "--episodes", episodes, "--record", "--life", "robot-2")
        assert done.returncode == 0, done.stderr
        start, lengths, summary = parsed(done.stdout)
        runs.append((start[1], int(summary[1]), lengths))
    (first_id, first_steps, first_lengths), (second_id, _, _) = runs
    first, second = closed_recording(http, first_id, 2), closed_recording(http, second_id, 1)
    assert first["life"] == second["life"] == "robot-2"
    assert [e["life_start"] for e in first["episodes"][:2]] == [0, first_lengths[0][0]]
    assert second["episodes"][0]["life_start"] == first_steps, "the second run goes on where the first ended"
    listed = http.get("/v0/recordings", params={"life": "robot-2"}).json()["data"]
    assert sorted(r["id"] for r in listed) == sorted([first_id, second_id])
