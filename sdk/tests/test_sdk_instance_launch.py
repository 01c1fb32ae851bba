"""`platform_sdk.launch.instance_launch`: real environment servers as child processes on Unix sockets."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import grpc
import platform_testing.env_server_client as helpers
import pytest
from platform_sdk.launch.containers import docker_command
from platform_sdk.launch.instance_launch import InstanceProcess, LaunchError, LaunchSpec, launch_instance
from platform_sdk.launch.instance_processes import server_command
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import environment_pb2_grpc as env_grpc

FACTORIES = """
import sys
import time


def broken(**kwargs):
    print("loading level 3 of the broken world", file=sys.stderr)
    raise RuntimeError("the level file is corrupt")


def slow(**kwargs):
    time.sleep(60)


def sized(report, blob):
    import gymnasium

    with open(report, "w") as file:
        file.write(str(len(blob)))
    return gymnasium.make("CartPole-v1")


def forking(report, **kwargs):
    # what the server's process holds when the environment is made (as ViZDoom's engine start
    # forks from it later)
    import os

    import gymnasium

    with open(report, "w") as file:
        file.write(os.environ.get("GRPC_ENABLE_FORK_SUPPORT", "unset"))
    return gymnasium.make("CartPole-v1")
"""


@pytest.fixture
def factory_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "factories"
    folder.mkdir()
    (folder / "launch_envs.py").write_text(textwrap.dedent(FACTORIES))
    return folder


async def _spec_of(instance: InstanceProcess) -> env_pb.SpecResponse:
    async with grpc.aio.insecure_channel(instance.address) as channel:
        call = env_grpc.EnvironmentStub(channel).Connect(timeout=30)
        await call.write(env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest()))
        response = await call.read()
        await call.done_writing()
    assert response.id == 1
    return response.spec


async def test_launch_serve_and_stop(tmp_path: Path) -> None:
    instance = await launch_instance(
        LaunchSpec(gymnasium_id="CartPole-v1", kwargs={"max_episode_steps": 5}), tmp_path, "cp"
    )
    try:
        assert instance.address == f"unix:{tmp_path}/cp.sock"
        assert instance.alive() and instance.log_path == tmp_path / "cp.log"
        assert (await _spec_of(instance)).env_id == "CartPole-v1"
    finally:
        await instance.stop()
    assert not instance.alive() and instance.returncode == 0
    assert not (tmp_path / "cp.sock").exists()
    await instance.stop()  # idempotent
    assert await instance.wait() == 0


async def test_wait_reports_a_killed_instance(tmp_path: Path) -> None:
    instance = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), tmp_path, "victim")
    os.kill(instance.pid, signal.SIGKILL)
    assert await asyncio.wait_for(instance.wait(), 10) == -signal.SIGKILL
    assert not instance.alive()


async def test_a_long_run_dir_gets_a_short_socket(tmp_path: Path) -> None:
    run_dir = tmp_path / ("d" * 60) / ("e" * 60)
    instance = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), run_dir, "long-named-instance")
    try:
        socket = instance.address.removeprefix("unix:")
        assert len(socket) < 100 and socket.endswith("long-named-instance.sock")
        assert instance.log_path == run_dir / "long-named-instance.log"
        assert (await _spec_of(instance)).action_space.discrete.n == 2
    finally:
        await instance.stop()
    assert not Path(socket).parent.exists()


async def test_the_server_runs_with_grpc_fork_handlers_off(tmp_path: Path, factory_dir: Path) -> None:
    """Environments that start processes of their own (ViZDoom's engine) fork from the server
    while its gRPC threads run; gRPC's fork handlers crashed it then (SIGSEGV on a Doom restore
    under load). The server turns them off itself, whatever its environment says."""
    report = tmp_path / "fork-support.txt"
    spec = LaunchSpec(factory="launch_envs:forking", path=str(factory_dir), kwargs={"report": str(report)})
    env = {k: v for k, v in os.environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    instance = await launch_instance(spec, tmp_path, "forking", env=env)
    try:
        await _spec_of(instance)
        assert report.read_text() == "0"
    finally:
        await instance.stop()


async def test_kwargs_reach_the_server_in_a_file_never_on_its_command_line(tmp_path: Path, factory_dir: Path) -> None:
    """300 KB of kwargs (an argument of the command line may hold 128 KiB: "Argument list too
    long"), out of every other user's sight (/proc/<pid>/cmdline is world-readable); the file is
    removed once the server serves."""
    report, blob = tmp_path / "size.txt", "x" * 300_000
    spec = LaunchSpec(factory="launch_envs:sized", path=str(factory_dir), kwargs={"report": str(report), "blob": blob})
    instance = await launch_instance(spec, tmp_path, "sized")
    try:
        await _spec_of(instance)
        assert report.read_text() == "300000"
        command_line = Path(f"/proc/{instance.pid}/cmdline").read_bytes()
        assert b"--kwargs-file" in command_line and b"xxxxxxxx" not in command_line
        assert not list(tmp_path.glob("*.kwargs.json"))
    finally:
        await instance.stop()


async def test_a_failing_instance_raises_with_its_log_tail(tmp_path: Path, factory_dir: Path) -> None:
    spec = LaunchSpec(factory="launch_envs:broken", path=str(factory_dir))
    with pytest.raises(LaunchError) as info:
        await launch_instance(spec, tmp_path, "bad")
    error = info.value
    assert "bad" in str(error) and "launch_envs:broken" in str(error) and "exited with code 2" in str(error)
    assert "loading level 3 of the broken world" in error.log_tail
    assert "RuntimeError: the level file is corrupt" in error.log_tail
    assert error.log_tail in str(error)


def _json_lines(text: str) -> list[dict[str, str]]:
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines and all(isinstance(line, dict) for line in lines)
    return lines


async def test_in_json_mode_the_log_holds_json_lines_only(tmp_path: Path) -> None:
    """PLATFORM_LOG_FORMAT=json in the instance's environment: its own log lines are JSON, and
    what it prints otherwise (the READY line) is wrapped into JSON lines naming the instance."""
    env = {**os.environ, "PLATFORM_LOG_FORMAT": "json"}
    instance = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), tmp_path, "cp-json", env=env)
    try:
        assert (await _spec_of(instance)).env_id == "CartPole-v1"
    finally:
        await instance.stop()
    lines = _json_lines(instance.log_path.read_text())
    ready = [line for line in lines if line["message"].startswith("READY unix:")]
    assert [(line["service"], line["logger"], line["instance"]) for line in ready] == [("instance", "output", "cp-json")]
    assert all({"time", "level", "service", "logger", "message"} <= set(line) for line in lines)


async def test_in_json_mode_a_failing_instance_keeps_its_log_tail(tmp_path: Path, factory_dir: Path) -> None:
    spec = LaunchSpec(factory="launch_envs:broken", path=str(factory_dir))
    env = {**os.environ, "PLATFORM_LOG_FORMAT": "json"}
    with pytest.raises(LaunchError) as info:
        await launch_instance(spec, tmp_path, "bad-json", env=env)
    messages = [line["message"] for line in _json_lines(info.value.log_tail)]
    assert "loading level 3 of the broken world" in messages
    assert any("RuntimeError: the level file is corrupt" in message for message in messages)
    assert _json_lines((tmp_path / "bad-json.log").read_text())[-1]["message"] == messages[-1]


async def test_a_slow_instance_times_out_and_is_killed(tmp_path: Path, factory_dir: Path) -> None:
    spec = LaunchSpec(factory="launch_envs:slow", path=str(factory_dir))
    with pytest.raises(LaunchError, match="was not ready within 3 s"):
        await launch_instance(spec, tmp_path, "slow", ready_timeout=3)
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    assert not any("launch_envs:slow" in _cmdline(pid) and str(tmp_path) in _cmdline(pid) for pid in pids)


def test_num_envs_goes_on_the_server_command_line() -> None:
    one = server_command(LaunchSpec(gymnasium_id="CartPole-v1", num_envs=1), "unix:/tmp/a.sock")
    assert "--num-envs" not in one
    vector = server_command(LaunchSpec(gymnasium_id="CartPole-v1", num_envs=64, jpeg_quality=70), "unix:/tmp/a.sock")
    assert vector[vector.index("--num-envs") + 1] == "64"
    assert vector[vector.index("--jpeg-quality") + 1] == "70"
    assert vector[-2:] == ["--listen", "unix:/tmp/a.sock"]
    image = docker_command(LaunchSpec(image="my-org/sim:1", num_envs=8), "c1")
    assert image[image.index("my-org/sim:1") + 1:] == ["--num-envs", "8"]
    assert "--num-envs" not in docker_command(LaunchSpec(image="my-org/sim:1"), "c1")


async def test_a_vector_instance_serves_its_sub_environments(tmp_path: Path) -> None:
    instance = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1", num_envs=3), tmp_path, "vec")
    try:
        spec = await _spec_of(instance)
        assert spec.num_envs == 3 and spec.action_space.discrete.n == 2
    finally:
        await instance.stop()


async def test_a_bad_spec_raises() -> None:
    with pytest.raises(LaunchError, match="exactly one of gymnasium_id and factory"):
        await launch_instance(LaunchSpec(), Path("/tmp"), "none")
    with pytest.raises(LaunchError, match="exactly one"):
        await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1", factory="a:b"), Path("/tmp"), "both")


LAUNCHING_PARENT = """
import asyncio, sys
from pathlib import Path
from platform_sdk.launch.instance_launch import LaunchSpec, launch_instance

async def main():
    instance = await launch_instance(LaunchSpec(gymnasium_id="CartPole-v1"), Path(sys.argv[1]), "orphan")
    print(instance.pid, flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


def test_instances_die_with_the_launching_process(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", LAUNCHING_PARENT, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        line = helpers.read_line(parent.stdout, 60)
        assert line.strip().isdigit(), line
        pid = int(line)
        assert not helpers.wait_gone(pid, timeout=0.2)  # it runs
    finally:
        parent.kill()
        parent.wait(10)
    assert helpers.wait_gone(pid, timeout=10)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
