"""`platform_sdk.agents`: the runner's arguments (bad ones exit 2 with one line), loading agents
(`random`, `module:factory` from the current folder, and every way that can fail), and the CLI
against a platform that is not there (exit 1, one line). No platform is started here: the runs
themselves are in tests/test_e2e_agents_run.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest
from platform_sdk.agents import AgentLoadError, RandomAgent, load_agent
from platform_sdk.agents.loading import build_agent
from platform_sdk.agents.loop import episode_ended
from platform_sdk.agents.run import main, parse_args, session_settings
from platform_testing.ports import free_port

AGENT_MODULE = """
import numpy as np

LOADED = "yes"


class Balancer:
    def __init__(self, env):
        self.env = env
        self.resets = 0

    def reset(self):
        self.resets += 1

    def act(self, observation):
        return int(observation[2] + 0.5 * observation[3] > 0)


def make_agent(env):
    return Balancer(env)


def make_nothing(env):
    return object()


def make_broken(env):
    raise RuntimeError("the weights file is missing")


class Factories:
    @staticmethod
    def nested(env):
        return Balancer(env)
"""


@pytest.fixture
def agent_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder (the current one) holding agent modules; sys.path and sys.modules restored after."""
    (tmp_path / "my_agent.py").write_text(AGENT_MODULE)
    (tmp_path / "broken_import.py").write_text("raise ImportError('torch is not installed here')\n")
    (tmp_path / "needs_dep.py").write_text("import a_dependency_nobody_has\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    for name in ("my_agent", "broken_import", "needs_dep"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield tmp_path
    for name in ("my_agent", "broken_import", "needs_dep"):
        sys.modules.pop(name, None)


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Runs parse_args expecting argparse's exit 2; returns its single stderr line."""
    with pytest.raises(SystemExit) as exit_info:
        parse_args(argv)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("platform-agent: error: ")
    return lines[0]


# -- arguments --------------------------------------------------------------------------------
def test_defaults_run_one_episode_of_the_random_agent_unrecorded():
    args = parse_args(["cartpole"])
    assert (args.env_id, args.agent, args.episodes, args.steps) == ("cartpole", "random", 1, None)
    assert args.kwargs is None and not args.record and args.life is None and args.resume is None
    assert session_settings(args) == {"url": None, "token": None, "record": False, "auto_reset": True}


def test_every_option_is_parsed_and_passed_on():
    args = parse_args(["cartpole", "--url", "http://h:1", "--token", "t", "--steps", "500", "--seed", "7",
                       "--kwargs", '{"sutton_barto_reward": true}', "--endless", "--record", "--life", "robot-1",
                       "--frame-every", "4", "--max-frames", "20000", "--save-every", "100"])
    assert args.steps == 500 and args.episodes is None and args.seed == 7 and args.save_every == 100
    assert args.kwargs == {"sutton_barto_reward": True, "endless": True}
    assert session_settings(args) == {"url": "http://h:1", "token": "t", "record": True, "auto_reset": True,
                                      "life": "robot-1", "frame_every": 4, "max_frames": 20000}


def test_endless_alone_sets_the_endless_kwarg():
    assert parse_args(["cartpole", "--endless", "--steps", "10"]).kwargs == {"endless": True}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["cartpole", "--episodes", "3", "--steps", "10"], "not allowed with argument"),
        (["cartpole", "--episodes", "0"], "must be at least 1, got 0"),
        (["cartpole", "--steps", "many"], "expected a whole number, got 'many'"),
        (["cartpole", "--kwargs", "{bad"], "not valid JSON"),
        (["cartpole", "--kwargs", "[1, 2]"], "expected a JSON object"),
        (["cartpole", "--life", "robot-1"], "argument --life: needs --record"),
        (["cartpole", "--record", "--max-frames", "100"], "argument --max-frames: thins the frames of a life"),
        (["cartpole", "--record", "--frame-every", "3"], "argument --frame-every: thins the frames of a life"),
        (["cartpole", "--record", "--life", "a", "--frame-every", "-2"], "must be at least 1, got -2"),
        (["cartpole", "--resume", "snap-1", "--endless"], "leave out --kwargs and --endless"),
        (["cartpole", "--resume", "snap-1", "--kwargs", "{}"], "leave out --kwargs and --endless"),
        (["cartpole", "--save-every", "0"], "must be at least 1, got 0"),
        ([], "the following arguments are required: ENV_ID"),
        (["cartpole", "--frames"], "unrecognized arguments: --frames"),
        (["cartpole", "--agent", "nowhere"], "expected 'random' or 'module:factory'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, argv, expected):
    assert expected in one_error_line(capsys, argv)


# -- agents -----------------------------------------------------------------------------------
def test_random_agent_samples_the_space_and_a_seed_repeats_it():
    agent_a, agent_b = RandomAgent(gym.spaces.Discrete(4), seed=3), RandomAgent(gym.spaces.Discrete(4), seed=3)
    actions = [agent_a.act(None) for _ in range(50)]
    assert actions == [agent_b.act(None) for _ in range(50)]
    assert set(actions) == {0, 1, 2, 3} and all(type(a) is int for a in actions)
    box = RandomAgent(gym.spaces.Box(-1.0, 1.0, (3,)), seed=0).act(None)
    assert box.shape == (3,) and gym.spaces.Box(-1.0, 1.0, (3,)).contains(box)


def test_random_is_built_from_the_env_with_the_seed():
    env = gym.make("CartPole-v1")
    agent = build_agent(load_agent("random", seed=5), env, "random")
    again = build_agent(load_agent("random", seed=5), env, "random")
    assert isinstance(agent, RandomAgent)
    assert [agent.act(None) for _ in range(20)] == [again.act(None) for _ in range(20)]


def test_module_factory_loads_from_the_current_folder(agent_folder):
    env = gym.make("CartPole-v1")
    agent = build_agent(load_agent("my_agent:make_agent"), env, "my_agent:make_agent")
    assert type(agent).__name__ == "Balancer" and agent.env is env
    observation, _ = env.reset(seed=0)
    assert agent.act(observation) in (0, 1)
    nested = build_agent(load_agent("my_agent:Factories.nested"), env, "my_agent:Factories.nested")
    assert type(nested).__name__ == "Balancer"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("my_agent", "expected 'random' or 'module:factory'"),
        (":make_agent", "expected 'random' or 'module:factory'"),
        ("my_agent:", "expected 'random' or 'module:factory'"),
        ("no_such_agent:make", "no module named 'no_such_agent' in "),
        ("my_agent:make_robot", "module 'my_agent' ("),
        ("my_agent:LOADED", "my_agent:LOADED is a str, not a function that takes the env"),
        ("broken_import:make", "importing 'broken_import' failed: ImportError: torch is not installed here"),
        ("needs_dep:make", "failed: ModuleNotFoundError: No module named 'a_dependency_nobody_has'"),
    ],
)
def test_agents_that_do_not_load_say_why(agent_folder, spec, expected):
    with pytest.raises(AgentLoadError) as error:
        load_agent(spec)
    assert expected in str(error.value)
    if "has no" in str(error.value):
        assert "has no 'make_robot'" in str(error.value)


def test_factories_that_fail_or_return_no_agent_say_why(agent_folder):
    env = gym.make("CartPole-v1")
    with pytest.raises(AgentLoadError, match="the agent factory my_agent:make_broken failed: RuntimeError: "
                                             "the weights file is missing"):
        build_agent(load_agent("my_agent:make_broken"), env, "my_agent:make_broken")
    with pytest.raises(AgentLoadError, match="returned a object, which has no act"):
        build_agent(load_agent("my_agent:make_nothing"), env, "my_agent:make_nothing")


def test_a_bad_agent_is_an_argument_error_before_any_session(agent_folder, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["cartpole", "--url", "http://127.0.0.1:9", "--agent", "my_agent:make_robot"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "argument --agent: module 'my_agent'" in err[0]


def test_episode_ends_are_terminations_truncations_and_restarts():
    assert episode_ended(True, False, {}) and episode_ended(False, True, {})
    assert episode_ended(False, False, {"final_obs": [0.0], "restarted": True})
    assert not episode_ended(False, False, {"x": 1})


# -- the CLI as a process ---------------------------------------------------------------------
def test_no_platform_there_exits_1_with_one_line():
    url = f"http://127.0.0.1:{free_port()}"
    done = subprocess.run([sys.executable, "-m", "platform_sdk.agents.run", "cartpole", "--url", url],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done
    assert done.stdout == ""
    expected = f"platform-agent: error: cartpole (no session started): cannot reach the platform at {url}: "
    assert done.stderr.strip().splitlines() == [expected + "[Errno 111] Connection refused"]


def test_bad_arguments_as_a_process_exit_2():
    done = subprocess.run([sys.executable, "-m", "platform_sdk.agents.run", "cartpole", "--steps", "0"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "platform-agent: error: argument --steps: must be at least 1, got 0 (see --help)"
    ]
    assert "Traceback" not in done.stderr and textwrap.dedent(done.stdout) == ""
