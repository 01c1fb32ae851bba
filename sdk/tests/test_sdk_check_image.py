"""Launching a Docker image: the `docker run` line, the clear error without an engine, the
container path (ready line, published port, kwargs, stop and removal) and the removal of
orphan containers (those whose owner process is gone) through a stand-in.

No Docker engine runs on the test machines, so the container path runs against `fake docker`:
a small in-test stand-in for the Docker CLI and engine (another program), put first on PATH.
Its `run` execs the real environment server on a free local port, as the image's entry
point would inside a container. Its `ps` lists the containers of its state file
`containers` ("<id> <owner label>" lines) and its `rm -f` removes one from there.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from platform_sdk.launch.containers import (
    CONTAINER_PORT,
    check_docker_engine,
    docker_command,
    kwargs_stdin,
    remove_orphan_containers,
)
from platform_sdk.launch.instance_launch import LaunchError, LaunchSpec, launch_instance
from platform_sdk.launch.instance_processes import server_command

REPO = Path(__file__).resolve().parents[2]
BYO_EXAMPLE = REPO / "envs" / "byo-example"

FAKE_DOCKER = """\
#!{python}
# A stand-in for the Docker CLI and engine (see the test module's docstring).
import os, socket, sys

state = os.environ["FAKE_DOCKER_STATE"]
args = sys.argv[1:]
with open(os.path.join(state, "calls"), "a") as calls:
    calls.write(" ".join(args) + "\\n")
if args[0] == "info":
    print("27.0.0-fake")
elif args[0] == "run":
    name = args[args.index("--name") + 1]
    publish = args[args.index("-p") + 1]
    assert publish == "127.0.0.1::{port}", publish
    after_publish = args[args.index("-p") + 2:]
    interactive = after_publish[0] == "-i"  # standard input kept open: the kwargs come on it
    rest = after_publish[2 if interactive else 1:]  # what follows the image: appended to its entry point
    assert interactive == ("--kwargs-file" in rest), args
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with open(os.path.join(state, name + ".port"), "w") as f:
        f.write(str(port))
    entry_point = [sys.executable, "-m", "platform_sdk", "--factory", "reacher2d:make_env",
                   "--path", {byo!r}, "--listen", f"127.0.0.1:{{port}}"]
    os.execv(sys.executable, entry_point + rest)
elif args[0] == "port":
    with open(os.path.join(state, args[1] + ".port")) as f:
        print(f"127.0.0.1:{{f.read()}}")
elif args[0] == "ps":
    assert args[1:] == ["-a", "--filter", "label=simulusion.owner",
                        "--format", '{{{{.ID}}}} {{{{.Label "simulusion.owner"}}}}'], args
    path = os.path.join(state, "containers")
    if os.path.exists(path):
        with open(path) as f:
            print(f.read(), end="")
elif args[0] == "rm":
    assert args[1] == "-f", args
    path = os.path.join(state, "containers")
    if os.path.exists(path):
        with open(path) as f:
            kept = [line for line in f if line.split()[0] != args[2]]
        with open(path, "w") as f:
            f.writelines(kept)
else:
    sys.exit(f"fake docker: unknown command {{args[0]}}")
"""

NO_ENGINE = """\
#!/bin/sh
echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
exit 1
"""


@pytest.fixture
def fake_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `docker` stand-in first on PATH; returns its state folder (calls, ports)."""
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    script = bin_dir / "docker"
    script.write_text(FAKE_DOCKER.format(python=sys.executable, port=CONTAINER_PORT, byo=str(BYO_EXAMPLE)))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_DOCKER_STATE", str(state))
    return state


@pytest.fixture
def docker_without_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `docker` whose engine is not running (as on this machine), first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(NO_ENGINE)
    (bin_dir / "docker").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def owner_label(pid: int | None = None, hostname: str | None = None) -> str:
    return f"simulusion.owner={hostname or socket.gethostname()}/{os.getpid() if pid is None else pid}"


def test_docker_command_publishes_the_port_locally_and_reads_kwargs_from_stdin():
    spec = LaunchSpec(image="my-org/sim:latest", kwargs={"level": 2, "secret_map": "x" * 300_000})
    command = docker_command(spec, "simulusion-x")
    assert command == [
        "docker", "run", "--rm", "--name", "simulusion-x", "--label", owner_label(),
        "-p", f"127.0.0.1::{CONTAINER_PORT}", "-i", "my-org/sim:latest", "--kwargs-file", "/dev/stdin",
    ]
    assert kwargs_stdin(spec) == json.dumps(spec.kwargs).encode()  # never on the command line
    assert docker_command(LaunchSpec(image="org/sim"), "n")[-1] == "org/sim"  # no kwargs: the image's own CMD
    assert kwargs_stdin(LaunchSpec(image="org/sim")) is None
    with pytest.raises(LaunchError, match="the kwargs of org/sim are not JSON"):
        kwargs_stdin(LaunchSpec(image="org/sim", kwargs={"level": object()}))
    with pytest.raises(LaunchError, match="exactly one of"):
        server_command(LaunchSpec(image="org/sim"), "unix:/tmp/x.sock")
    with pytest.raises(LaunchError, match="names no gymnasium_id or factory"):
        docker_command(LaunchSpec(image="org/sim", factory="m:f"), "n")


async def test_no_engine_is_one_clear_line(docker_without_engine, tmp_path):
    with pytest.raises(LaunchError) as info:
        await launch_instance(LaunchSpec(image="my-org/sim:latest"), tmp_path / "run", "s1")
    message = str(info.value)
    assert message == (
        "this environment runs in the Docker image my-org/sim:latest but no Docker engine is reachable: "
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
    )
    assert info.value.log_tail == ""


def test_the_real_docker_cli_without_an_engine_fails_clearly():
    if shutil.which("docker") is None:
        pytest.skip("no docker command here")
    if subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30).returncode == 0:
        pytest.skip("a Docker engine is reachable here")
    with pytest.raises(LaunchError, match=r"^this environment runs in the Docker image a/b but no Docker engine"):
        asyncio.run(check_docker_engine("a/b"))


async def test_no_docker_command_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    with pytest.raises(LaunchError, match=r"Docker image a/b but no Docker engine is reachable: the docker "
                                          r"command is not installed$"):
        await launch_instance(LaunchSpec(image="a/b"), tmp_path / "run", "s1")


async def test_an_image_instance_serves_on_its_published_port_and_is_removed(fake_docker, tmp_path):
    spec = LaunchSpec(image="simulusion/byo-example", kwargs={"frame_size": 32})
    instance = await launch_instance(spec, tmp_path / "run", "sess-1", ready_timeout=60)
    try:
        host, port = instance.address.rsplit(":", 1)
        assert host == "127.0.0.1" and int(port) > 0
        with socket.create_connection((host, int(port)), timeout=5):
            pass  # the environment server listens there
        assert instance.alive()
    finally:
        await instance.stop()
    assert not instance.alive()
    calls = (fake_docker / "calls").read_text().splitlines()
    container = instance.container
    assert container.startswith("simulusion-sess-1-")
    assert calls[0].startswith("info")
    assert calls[1] == (
        f"run --rm --name {container} --label {owner_label()} -p 127.0.0.1::{CONTAINER_PORT} "
        "-i simulusion/byo-example --kwargs-file /dev/stdin"
    )
    assert "frame_size" not in "".join(calls)  # the kwargs came on standard input
    assert calls[2] == f"port {container} {CONTAINER_PORT}/tcp"
    assert calls[3] == f"rm -f {container}"


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    process = subprocess.Popen([sys.executable, "-c", ""])
    process.wait()
    return process.pid


async def test_orphan_containers_of_this_machine_are_removed(fake_docker):
    this_host = socket.gethostname()
    gone = dead_pid()
    (fake_docker / "containers").write_text(
        f"c0ffee01 {this_host}/{gone}\n"  # its env host is gone: an orphan
        f"c0ffee02 {this_host}/{os.getpid()}\n"  # its env host is alive
        f"c0ffee03 other-{this_host}/{gone}\n"  # another machine's
        "c0ffee04 not-an-owner\n"  # a label we did not write
    )
    assert await remove_orphan_containers() == ["c0ffee01"]
    calls = (fake_docker / "calls").read_text().splitlines()
    assert [call for call in calls if call.startswith("rm")] == ["rm -f c0ffee01"]
    assert (fake_docker / "containers").read_text().split() == [
        "c0ffee02", f"{this_host}/{os.getpid()}", "c0ffee03", f"other-{this_host}/{gone}", "c0ffee04", "not-an-owner",
    ]
    assert await remove_orphan_containers() == []  # nothing left to remove


async def test_no_orphans_looked_for_without_docker(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker command on it
    assert await remove_orphan_containers() == []


async def test_no_orphans_looked_for_without_an_engine(docker_without_engine):
    assert await remove_orphan_containers() == []


def test_platform_check_of_an_image(fake_docker):
    script = Path(sys.executable).with_name("platform-check")
    result = subprocess.run(
        [str(script), "--image", "simulusion/byo-example", "--kwargs", '{"frame_size": 48}', "--steps", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checking the Docker image simulusion/byo-example" in result.stdout
    assert "7 checks: 7 passed, 0 failed" in result.stdout and "all 48x48" in result.stdout
    assert result.stderr == ""
