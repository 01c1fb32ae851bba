"""`launch_instance`: start an environment instance for a `LaunchSpec` and wait until it serves.

A Gymnasium id or a factory runs as an environment server process on a Unix socket
(`platform_sdk.launch.instance_processes`); an image as a `docker run` of it, reached on the
container's published local port (`platform_sdk.launch.containers`). Either way the caller gets an
`InstanceProcess`. The names an env host needs to launch instances are here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from platform_sdk.launch.containers import launch_container
from platform_sdk.launch.instance_processes import (
    InstanceProcess,
    LaunchError,
    LaunchSpec,
    Transport,
    launch_process,
)

__all__ = ["InstanceProcess", "LaunchError", "LaunchSpec", "Transport", "launch_instance"]


async def launch_instance(
    spec: LaunchSpec,
    run_dir: Path,
    name: str,
    *,
    ready_timeout: float = 60.0,
    transport: Transport = "grpc",
    env: Mapping[str, str] | None = None,
) -> InstanceProcess:
    """Start an instance for `spec` and wait until it serves.

    Args:
        spec: what to run.
        run_dir: where its log (`<name>.log`) and, for a process, its socket (`<name>.sock`) go.
        name: the instance's name, unique within `run_dir`.
        ready_timeout: seconds to wait for it to serve.
        transport: what a process is to speak ("frames": the env host's own instances); an
            image always speaks gRPC (its `transport` says so).
        env: a process's environment (default: this process's); an image's container gets none
            of it either way.

    Raises:
        LaunchError: it exited before it was ready, or did not get ready in time (it is then
            stopped); the error carries the log tail. For an image: also when no Docker engine
            is reachable (a one-line message naming the image).
    """
    if not spec.image:
        return await launch_process(spec, run_dir, name, ready_timeout=ready_timeout, transport=transport, env=env)
    run_dir = Path(run_dir).absolute()
    run_dir.mkdir(parents=True, exist_ok=True)
    return await launch_container(spec, run_dir / f"{name}.log", name, ready_timeout)
