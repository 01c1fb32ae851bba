"""Instances of Docker images, and removal of the containers that their env host left behind.

An image instance runs as `docker run --rm --name simulusion-<name>-<hex> --label
simulusion.owner=<hostname>/<pid> -p 127.0.0.1::50051 [-i] IMAGE [--kwargs-file /dev/stdin]`: the
image's entry point is the environment server listening on 0.0.0.0:50051, and the instance's
address is the published local port. Kwargs, when there are any, never travel on the command line
(limited in size, readable by every user of the machine, kept in `docker inspect`): with `-i` the
launcher writes their JSON to the container's standard input and closes it, and the server reads
it from `--kwargs-file /dev/stdin`.

The `docker run` CLI dies with the process that launched it (parent-death signal), but its
container does not: a SIGKILLed env host leaves it running. The label names the launching
process, so `remove_orphan_containers` (run by the env host at start) removes the containers of
this machine whose owner is no longer alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import socket
import uuid
from pathlib import Path

from platform_sdk.launch.instance_processes import (
    InstanceProcess,
    LaunchError,
    LaunchSpec,
    server_options,
    wait_ready,
)
from platform_sdk.launch.parent_death import die_with_parent

log = logging.getLogger(__name__)

# The port an image's environment server listens on inside its container.
CONTAINER_PORT = 50051
# The label naming a container's owner: "<hostname>/<pid of the process that launched it>".
OWNER_LABEL = "simulusion.owner"
_DOCKER_TIMEOUT_S = 15.0


class NoDockerEngineError(LaunchError):
    """An image entry cannot start here: no Docker engine answers (the host's problem, not the
    environment's)."""


class ContainerInstance(InstanceProcess):
    """A `docker run` of an image; stopping it also removes its container.

    Attributes:
        container: the container's name.
    """

    def __init__(self, process: asyncio.subprocess.Process, container: str, log_path: Path) -> None:
        # an image's entry point is a user's environment server: it speaks gRPC
        super().__init__(process, "", log_path, log_path.with_suffix(".no-socket"), None, transport="grpc")
        self.container = container

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop the `docker run` (its signal reaches the container), then remove the container."""
        await super().stop(timeout)
        with contextlib.suppress(LaunchError):
            await _docker("rm", "-f", self.container)


def owner() -> str:
    """This process as a container owner: "<hostname>/<pid>"."""
    return f"{socket.gethostname()}/{os.getpid()}"


def docker_command(spec: LaunchSpec, container: str) -> list[str]:
    """The `docker run` command line of an image instance (its port published on 127.0.0.1,
    labelled with this process as its owner)."""
    if not spec.image or spec.gymnasium_id or spec.factory:
        raise LaunchError(f"a launch spec with an image names no gymnasium_id or factory, got {spec!r}")
    command = ["docker", "run", "--rm", "--name", container, "--label", f"{OWNER_LABEL}={owner()}",
               "-p", f"127.0.0.1::{CONTAINER_PORT}"]
    if spec.kwargs:  # read from the container's standard input (`kwargs_stdin`), never from here
        command += ["-i", spec.image, "--kwargs-file", "/dev/stdin"]
    else:
        command += [spec.image]
    return command + server_options(spec)


def kwargs_stdin(spec: LaunchSpec) -> bytes | None:
    """What `docker run` gets on its standard input: the kwargs' JSON (None without kwargs).

    Raises:
        LaunchError: the kwargs are not JSON.
    """
    if not spec.kwargs:
        return None
    try:
        return json.dumps(spec.kwargs).encode()
    except (TypeError, ValueError) as exc:
        raise LaunchError(f"the kwargs of {spec.image} are not JSON: {exc}") from None


async def check_docker_engine(image: str) -> None:
    """Raise a one-line NoDockerEngineError naming `image` unless a Docker engine answers."""
    try:
        await _docker("info", "--format", "{{.ServerVersion}}")
    except LaunchError as exc:
        raise NoDockerEngineError(
            f"this environment runs in the Docker image {image} but no Docker engine is reachable: {exc}"
        ) from None


async def remove_orphan_containers() -> list[str]:
    """Remove (`docker rm -f`) the containers launched on this machine by a process that is gone.

    Containers of live owners and of other machines are left alone. Without a docker command or
    an engine that answers, nothing is done (one debug log line).

    Returns:
        The ids of the containers removed.
    """
    try:
        listing = await _docker("ps", "-a", "--filter", f"label={OWNER_LABEL}",
                                "--format", f'{{{{.ID}}}} {{{{.Label "{OWNER_LABEL}"}}}}')
    except LaunchError as exc:
        log.debug("no orphan containers looked for: %s", exc)
        return []
    hostname = socket.gethostname()
    removed: list[str] = []
    for line in listing.splitlines():
        container, _, label = line.strip().partition(" ")
        if not container or not _is_orphan(label.strip(), hostname):
            continue
        try:
            await _docker("rm", "-f", container)
        except LaunchError as exc:
            log.warning("cannot remove the orphan container %s (owner %s): %s", container, label.strip(), exc)
        else:
            removed.append(container)
    return removed


def _is_orphan(label: str, hostname: str) -> bool:
    """Whether an owner label "<hostname>/<pid>" names a process of this machine that is gone."""
    owner_host, _, pid_text = label.rpartition("/")
    if owner_host != hostname or not pid_text.isdigit() or int(pid_text) <= 0:
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


async def _docker(*args: str) -> str:
    """Run `docker ARGS`; returns its stdout.

    Raises:
        LaunchError: docker is not installed, failed (its last stderr line) or did not answer.
    """
    if shutil.which("docker") is None:
        raise LaunchError("the docker command is not installed")
    try:
        process = await asyncio.create_subprocess_exec(
            "docker", *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise LaunchError(f"cannot run docker {args[0]}: {exc}") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), _DOCKER_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise LaunchError(f"docker {args[0]} did not answer within {_DOCKER_TIMEOUT_S:g} s") from None
    except BaseException:  # cancelled: leave no docker command behind
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    if process.returncode != 0:
        lines = [line.strip() for line in err.decode(errors="replace").splitlines() if line.strip()]
        raise LaunchError(lines[-1] if lines else f"docker {args[0]} exited with code {process.returncode}")
    return out.decode(errors="replace")


async def _write_and_close(process: asyncio.subprocess.Process, data: bytes) -> None:
    """Write `data` to the process's standard input and close it (the end of the kwargs).

    Raises:
        LaunchError: the process exited before reading it all.
    """
    assert process.stdin is not None
    try:
        process.stdin.write(data)
        await asyncio.wait_for(process.stdin.drain(), _DOCKER_TIMEOUT_S)
        process.stdin.close()
        await process.stdin.wait_closed()
    except (BrokenPipeError, ConnectionResetError) as exc:
        raise LaunchError(f"exited before it read its kwargs ({exc})") from None
    except TimeoutError:
        raise LaunchError(f"did not read its kwargs within {_DOCKER_TIMEOUT_S:g} s") from None


async def launch_container(spec: LaunchSpec, log_path: Path, name: str, ready_timeout: float) -> InstanceProcess:
    """Start `docker run` of `spec.image` and wait until its environment server serves on the
    published port (see `instance_launch.launch_instance`, which calls this for image specs).

    Raises:
        NoDockerEngineError: no Docker engine answers.
        LaunchError: the container exited before it was ready, was not ready in time or
            published no port (it is then stopped and removed); carries the log tail.
    """
    await check_docker_engine(spec.image)
    container = f"simulusion-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}-{uuid.uuid4().hex[:8]}"
    command = docker_command(spec, container)
    kwargs_input = kwargs_stdin(spec)
    with open(log_path, "wb") as log_file:  # noqa: ASYNC230 - a local file, created once
        try:
            process = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.DEVNULL if kwargs_input is None else asyncio.subprocess.PIPE,
                stdout=log_file, stderr=log_file, start_new_session=True, preexec_fn=die_with_parent(os.getpid()),
            )
        except OSError as exc:
            raise LaunchError(f"cannot start the instance {name} of {spec.image}: {exc}") from None
    instance = ContainerInstance(process, container, log_path)
    try:
        if kwargs_input is not None:
            await _write_and_close(process, kwargs_input)
        await wait_ready(instance, ready_timeout)  # the address inside the container
        published = await _docker("port", container, f"{CONTAINER_PORT}/tcp")
        instance.address = published.split()[0] if published.split() else ""
        if not instance.address:
            raise LaunchError(f"publishes no port for {CONTAINER_PORT}/tcp")
    except LaunchError as exc:
        await instance.stop(timeout=5.0)
        raise LaunchError(f"the instance {name} of {spec.image} {exc.args[0]}", instance.log_tail()) from None
    except BaseException:  # cancelled: leave nothing behind
        await instance.stop(timeout=5.0)
        raise
    return instance
