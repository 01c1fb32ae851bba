"""`platform-check` as a real process against real environment servers: envs/byo-example
passes; broken factories fail the check they break (exit 1) or do not start (exit 2)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BYO_EXAMPLE = REPO / "envs" / "byo-example"
SCRIPT = Path(sys.executable).with_name("platform-check")
CHECK_NAMES = ["spec", "observations", "stepping", "invalid_action", "seeding", "snapshot", "render"]

BROKEN = """
import sys

import numpy as np
from gymnasium import spaces

sys.path.insert(0, {byo!r})
from reacher2d import PointReacherEnv


class Forgetful(PointReacherEnv):
    # a custom __getstate__ that leaves out the velocity: restored runs diverge
    def __getstate__(self):
        state = dict(self.__dict__)
        state["_velocity"] = np.zeros(2)
        return state


def make_forgetful(render_mode=None, **kwargs):
    return Forgetful(render_mode=render_mode, **kwargs)


def make_escaping(render_mode=None, **kwargs):
    env = PointReacherEnv(render_mode=render_mode, **kwargs)
    env.observation_space = spaces.Box(-0.05, 0.05, (6,), np.float32)  # narrower than the arena
    return env


def make_broken(**kwargs):
    raise RuntimeError("the track file is corrupt")


class Crashing(PointReacherEnv):
    # dies without a word when a snapshot is restored, as a native crash would
    def __setstate__(self, state):
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def make_crashing(render_mode=None, **kwargs):
    return Crashing(render_mode=render_mode, **kwargs)
"""


def platform_check(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False, cwd=REPO
    )


def status_lines(stdout: str) -> dict[str, str]:
    """{check name: its line} for the PASS/FAIL/SKIP lines."""
    lines = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("PASS", "FAIL", "SKIP"):
            lines[parts[1]] = line
    return lines


@pytest.fixture(scope="module")
def broken_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("broken_envs")
    (folder / "broken_envs.py").write_text(textwrap.dedent(BROKEN.format(byo=str(BYO_EXAMPLE))))
    return folder


def test_the_byo_example_passes_every_check():
    result = platform_check("--factory", "reacher2d:make_env", "--path", "envs/byo-example")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = status_lines(result.stdout)
    assert list(lines) == CHECK_NAMES
    assert all(line.startswith("PASS") for line in lines.values()), result.stdout
    assert "identical observations, rewards and frames" in lines["snapshot"]
    assert "128x128" in lines["render"]
    assert "7 checks: 7 passed, 0 failed" in result.stdout


def test_kwargs_reach_the_environment():
    result = platform_check(
        "--factory", "reacher2d:make_env", "--path", str(BYO_EXAMPLE), "--kwargs", '{"frame_size": 64}',
        "--steps", "5",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all 64x64" in status_lines(result.stdout)["render"]


@pytest.mark.parametrize(
    ("factory", "failing", "needle"),
    [
        ("broken_envs:make_forgetful", "snapshot", "after the first restore: the observation differs"),
        ("broken_envs:make_escaping", "observations", "is not in Box"),
    ],
)
def test_a_broken_environment_fails_the_check_it_breaks(broken_dir, factory, failing, needle):
    result = platform_check("--factory", factory, "--path", str(broken_dir))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = status_lines(result.stdout)
    assert list(lines) == CHECK_NAMES
    assert lines[failing].startswith(f"FAIL  {failing}") and needle in lines[failing]
    assert [name for name, line in lines.items() if line.startswith("FAIL")] == [failing]
    assert f"1 failed ({failing})" in result.stdout


def test_a_server_that_dies_fails_the_checks_after_it_and_says_how_it_ended(broken_dir):
    result = platform_check("--factory", "broken_envs:make_crashing", "--path", str(broken_dir))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = status_lines(result.stdout)
    assert [name for name, line in lines.items() if line.startswith("FAIL")] == ["snapshot", "render"]
    assert "platform-check: the environment server was killed by SIGKILL during the checks" in result.stdout


def test_a_factory_that_raises_is_named_in_one_line(broken_dir):
    result = platform_check("--factory", "broken_envs:make_broken", "--path", str(broken_dir))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("platform-check: error: factory broken_envs:make_broken")
    assert "did not start" in lines[0]
    assert "factory broken_envs:make_broken raised RuntimeError: the track file is corrupt" in lines[0]
    assert "PASS" not in result.stdout and "FAIL" not in result.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([], "one of the arguments --factory --image --gym-id is required"),
        (["--factory", "m:f", "--image", "org/sim"], "not allowed with argument"),
        (["--factory", "m:f", "--kwargs", "[1]"], "--kwargs must be a JSON object, not list"),
        (["--factory", "m:f", "--kwargs", "{oops"], "--kwargs is not valid JSON"),
        (["--factory", "m:f", "--path", "/no/such/folder"], "is not a folder"),
        (["--factory", "no_colon"], "--factory must be 'module:function'"),
        (["--image", "org/sim", "--path", "."], "--path only goes with --factory"),
        (["--gym-id", "CartPole-v1", "--steps", "0"], "--steps must be at least 1"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, needle):
    result = platform_check(*args, timeout=30)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("platform-check: error: ")
    assert needle in result.stderr


def test_an_image_without_a_docker_engine_exits_2_with_a_clear_line():
    has_docker = shutil.which("docker") is not None
    engine = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30) if has_docker else None
    if engine is not None and engine.returncode == 0:
        pytest.skip("a Docker engine is reachable here: the no-engine error cannot be shown")
    result = platform_check("--image", "my-org/sim:latest", timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        "platform-check: error: this environment runs in the Docker image my-org/sim:latest"
        " but no Docker engine is reachable: "
    )


def test_python_dash_m_runs_the_same_command():
    result = subprocess.run(
        [sys.executable, "-m", "platform_sdk.check", "--help"], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0 and "--factory" in result.stdout and "--image" in result.stdout
