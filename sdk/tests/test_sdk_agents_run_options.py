"""The run and compare commands' options: exactly the guide's, no abbreviations, one-line errors
(exit 2), and the commands against a platform that is not there (exit 1, one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from platform_sdk.agents import compare_options, run_options
from platform_testing.ports import free_port


def one_error_line(capsys: pytest.CaptureFixture[str], parse, argv: list[str]) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_info:
        parse(argv)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_guides_options_are_parsed(tmp_path: Path) -> None:
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"lr": 0.1}))
    checkpoint = tmp_path / "agent.ckpt"
    checkpoint.write_text("x")
    args = run_options.parse_args([
        "--agent", "my_agent:make", "--env", "cartpole", "--kwargs", '{"sutton_barto_reward": true}',
        "--config", str(config), "--episodes", "20", "--seed", "3", "--max-steps", "50", "--record",
        "--save", "agent.ckpt", "--save-every", "5", "--load", str(checkpoint)])
    assert (args.agent, args.env, args.kwargs, args.config) == ("my_agent:make", "cartpole",
                                                               {"sutton_barto_reward": True}, {"lr": 0.1})
    assert (args.episodes, args.seed, args.max_steps, args.record) == (20, 3, 50, True)
    assert (args.save, args.save_every, args.load) == (Path("agent.ckpt"), 5, checkpoint)


def test_endless_takes_steps_window_and_life() -> None:
    args = run_options.parse_args(["--agent", "a:b", "--env", "cartpole", "--endless", "--steps", "100000",
                                   "--window", "1000", "--record", "--life", "robot-1", "--max-frames", "20000"])
    assert args.kwargs == {"endless": True} and (args.steps, args.window, args.episodes) == (100000, 1000, None)
    assert run_options.parse_args(["--agent", "a:b", "--env", "cartpole", "--endless"]).window == 1000
    assert run_options.parse_args(["--agent", "a:b", "--env", "cartpole"]).episodes == 1


@pytest.mark.parametrize("argv, expected", [
    (["--env", "cartpole"], "the following arguments are required: --agent"),
    (["--agent", "a:b"], "the following arguments are required: --env"),
    (["--agent", "a:b", "cartpole"], "unrecognized arguments: cartpole"),
    (["--agent", "a:b", "--env", "cartpole", "--save-ev", "3"], "unrecognized arguments: --save-ev"),
    (["--agent", "a:b", "--env", "cartpole", "--ep", "3"], "unrecognized arguments: --ep"),
    (["--agent", "a:b", "--env", "cartpole", "--save-every", "3"], "--save-every: needs --save PATH"),
    (["--agent", "a:b", "--env", "cartpole", "--save", "x", "--save-every", "0"], "must be at least 1, got 0"),
    (["--agent", "a:b", "--env", "cartpole", "--load", "/nowhere/agent.ckpt"], "/nowhere/agent.ckpt does not exist"),
    (["--agent", "a:b", "--env", "cartpole", "--config", "/nowhere.json"], "cannot read /nowhere.json"),
    (["--agent", "a:b", "--env", "cartpole", "--kwargs", "[1]"], "expected a JSON object"),
    (["--agent", "a:b", "--env", "cartpole", "--window", "10"], "--window: groups an endless run's log lines"),
    (["--agent", "a:b", "--env", "cartpole", "--endless", "--episodes", "2"], "an endless run has no episodes"),
    (["--agent", "a:b", "--env", "cartpole", "--endless", "--max-steps", "2"], "never ends an episode"),
    (["--agent", "a:b", "--env", "cartpole", "--life", "x"], "--life: needs --record"),
    (["--agent", "a:b", "--env", "cartpole", "--frame-every", "2"], "needs --life NAME"),
    (["--agent", "a:b", "--env", "cartpole", "--reward-goal", "5"], "--reward-goal: the goal is over test episodes"),
    (["--agent", "a:b", "--env", "cartpole", "--test-every", "1"], "--test-every: at least 2"),
    (["--agent", "a:b", "--env", "cartpole", "--checkpoint-every", "3"], "--checkpoint-every: needs --save PATH"),
    (["--agent", "a:b", "--env", "cartpole", "--save", "x", "--checkpoint-every", "3", "--save-every", "2"],
     "--checkpoint-every saves the agent too"),
    (["--agent", "a:b", "--env", "cartpole", "--epsilon", "exp:1,0,3"], "decay must be in (0, 1]"),
    (["--agent", "a:b", "--env", "cartpole", "--run", "r", "--endless"], "--endless: the training mode and --run"),
])
def test_bad_run_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                expected: str) -> None:
    line = one_error_line(capsys, run_options.parse_args, argv)
    assert line.startswith("platform-agent: error: ") and expected in line, line


def test_the_training_mode_and_its_defaults() -> None:
    args = run_options.parse_args(["--agent", "a:b", "--env", "cartpole", "--test-every", "5", "--reward-goal", "195",
                                   "--epsilon", "linear:1,0.05,200", "--save", "x", "--checkpoint-every", "10"])
    assert args.training and (args.window, args.episodes) == (100, None)  # until the goal
    assert not run_options.parse_args(["--agent", "a:b", "--env", "cartpole"]).training
    only_run = run_options.parse_args(["--agent", "a:b", "--env", "cartpole", "--run", "r", "--episodes", "3"])
    assert only_run.training and only_run.test_every is None


def test_save_takes_a_path_and_is_not_save_every() -> None:
    args = run_options.parse_args(["--agent", "a:b", "--env", "cartpole", "--save", "10"])
    assert args.save == Path("10") and args.save_every is None


def test_the_compare_options(tmp_path: Path) -> None:
    checkpoint = tmp_path / "mine.ckpt"
    checkpoint.write_text("x")
    args = compare_options.parse_args([
        "--env", "menagerie-franka-emika-panda-reach", "--agent", "mine=my_agent:make",
        "--agent", "base=my_agent:baseline", "--warmup", "200", "--steps", "6000", "--window", "50", "--record",
        "--kwargs", '{"world_changes": [{"at": 2200, "change": "mass", "body": "hand", "scale": 2.0}]}',
        "--load", f"mine={checkpoint}"])
    assert args.agents == [("mine", "my_agent:make"), ("base", "my_agent:baseline")]
    assert (args.warmup, args.steps, args.window, args.record) == (200, 6000, 50, True)
    assert args.loads == {"mine": checkpoint} and args.world_changes[0]["at"] == 2200


@pytest.mark.parametrize("argv, expected", [
    (["--agent", "a=m:f", "--steps", "10"], "required: --env"),
    (["--env", "e", "--agent", "m:f", "--steps", "10"], "expected NAME=MODULE:FUNCTION"),
    (["--env", "e", "--agent", "a=m:f", "--agent", "a=m:g", "--steps", "10"], "'a' is given twice"),
    (["--env", "e", "--agent", "a=m:f", "--steps", "10", "--load", "b=x"], "no agent is named 'b'"),
    (["--env", "e", "--agent", "a b=m:f", "--steps", "10"], "must be 1-64 letters"),
    (["--env", "e", "--agent", "a=m:f", "--steps", "10", "--kwargs", '{"world_changes": 3}'], "must be a list"),
])
def test_bad_compare_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                    expected: str) -> None:
    line = one_error_line(capsys, compare_options.parse_args, argv)
    assert line.startswith("platform-compare: error: ") and expected in line, line


@pytest.mark.parametrize("module, extra", [
    ("platform_sdk.agents.run", ["--env", "cartpole"]),
    ("platform_sdk.agents.compare", ["--env", "cartpole", "--agent", "r=platform_sdk.agents.builtin:RandomAgent",
                                     "--steps", "5"]),
])
def test_no_platform_there_exits_1_with_one_line(module: str, extra: list[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    argv = [sys.executable, "-m", module, "--agent", "platform_sdk.agents.builtin:RandomAgent", *extra, "--url", url]
    if module.endswith("compare"):
        argv = [sys.executable, "-m", module, *extra, "--url", url]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1, result
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "cannot reach the platform at " + url in errors[0], errors
