"""`python -m platform_sdk`: arguments, factories, start-up failures and signals."""

from __future__ import annotations

import signal
import textwrap
from pathlib import Path

import platform_testing.env_server_client as helpers
import pytest
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

FACTORIES = '''
import gymnasium
from gymnasium import spaces


def make(size=2, render_mode=None):
    """Takes render_mode: gets rgb_array."""
    print("hello from the factory")
    return gymnasium.make("CartPole-v1", render_mode=render_mode, max_episode_steps=size)


def plain(size=2):
    """Takes no render_mode."""
    return gymnasium.make("CartPole-v1", max_episode_steps=size)


def broken(**kwargs):
    raise ValueError("no such\\nlevel")


class _Texty(gymnasium.Env):
    observation_space = spaces.Text(4)
    action_space = spaces.Discrete(2)


def texty():
    return _Texty()


def not_an_env():
    return 42
'''


@pytest.fixture
def factory_dir(tmp_path: Path) -> Path:
    (tmp_path / "my_envs.py").write_text(textwrap.dedent(FACTORIES))
    return tmp_path


def _one_error_line(args: list[str]) -> str:
    result = helpers.run_server(args)
    assert result.returncode == 2, result
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_factory_from_a_path_with_kwargs(factory_dir: Path) -> None:
    args = ["--factory", "my_envs:make", "--path", str(factory_dir), "--kwargs", '{"size": 3}']
    with helpers.ServerProcess(args) as server, helpers.EnvClient(server.address) as client:
        spec = client.ok(spec=env_pb.SpecRequest()).spec
        assert spec.env_id == "CartPole-v1" and spec.render_mode == "rgb_array"
        client.ok(reset=env_pb.ResetRequest(seed=0))
        steps = [client.ok(step=env_pb.StepRequest(action=pb.Value(discrete=0))).step for _ in range(3)]
        assert [s.truncated for s in steps] == [False, False, True]  # the kwargs reached the factory
        assert client.ok(render=env_pb.RenderRequest()).render.frame.width == 600  # imports pygame
    assert server.process.wait(timeout=15) == 0
    assert server.process.stdout.read() == ""  # prints went to stderr: READY is stdout's only line
    assert "hello from the factory" in server.stderr_text()


def test_a_factory_without_render_mode(factory_dir: Path) -> None:
    args = ["--factory", "my_envs:plain", "--path", str(factory_dir), "--listen", "127.0.0.1:0"]
    with helpers.ServerProcess(args) as server, helpers.EnvClient(server.address) as client:
        assert server.address.startswith("127.0.0.1:") and not server.address.endswith(":0")
        assert client.ok(spec=env_pb.SpecRequest()).spec.render_mode == ""


def test_broken_factories_exit_2_with_one_line(factory_dir: Path) -> None:
    path = ["--path", str(factory_dir)]
    assert "factory my_envs:broken raised ValueError: no such level" in _one_error_line(
        ["--factory", "my_envs:broken", *path]
    )
    assert "cannot import 'nowhere'" in _one_error_line(["--factory", "nowhere:make", *path])
    assert "has no attribute 'missing'" in _one_error_line(["--factory", "my_envs:missing", *path])
    assert "Text is not supported" in _one_error_line(["--factory", "my_envs:texty", *path])
    assert "not a Gymnasium environment" in _one_error_line(["--factory", "my_envs:not_an_env", *path])


def test_bad_arguments_exit_2_with_one_line() -> None:
    assert "one of the arguments --gym-id --factory is required" in _one_error_line([])
    assert "--kwargs is not valid JSON" in _one_error_line(["--gym-id", "CartPole-v1", "--kwargs", "{nope"])
    assert "--kwargs must be a JSON object" in _one_error_line(["--gym-id", "CartPole-v1", "--kwargs", "[1]"])
    assert "cannot make 'NoSuchEnv-v0'" in _one_error_line(["--gym-id", "NoSuchEnv-v0"])
    assert "--listen must be" in _one_error_line(["--gym-id", "CartPole-v1", "--listen", "nowhere"])
    assert "'module:function'" in _one_error_line(["--factory", "justamodule"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signals_stop_cleanly_and_remove_the_socket(tmp_path: Path, sig: signal.Signals) -> None:
    socket = tmp_path / "env.sock"
    server = helpers.ServerProcess(["--gym-id", "CartPole-v1", "--listen", f"unix:{socket}"])
    assert server.address == f"unix:{socket}" and socket.exists()
    with helpers.EnvClient(server.address) as client:
        client.ok(reset=env_pb.ResetRequest(seed=0))
    server.process.send_signal(sig)
    assert server.process.wait(timeout=15) == 0
    assert server.process.stdout.read() == ""  # READY was the only line on stdout
    assert not socket.exists()
