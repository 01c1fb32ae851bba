"""Launch an environment server, connect to it, and run the compliance suite over the stream."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from platform_contracts.compliance import CheckResult, ComplianceOptions, run_all

from platform_sdk.check.connection import GrpcConnection
from platform_sdk.launch.instance_launch import InstanceProcess, LaunchSpec, launch_instance

EXIT_WAIT_S = 1.0  # how long a failed run waits to learn whether the server has exited


@dataclass(frozen=True)
class CheckRun:
    """The results of one run, with what the server logged (its last lines) and, when a check
    failed because the server was gone, how it ended ("was killed by SIGSEGV", "exited with
    code 1"; empty otherwise)."""

    results: list[CheckResult]
    log_tail: str
    server_ended: str = ""

    @property
    def passed(self) -> bool:
        return all(result.passed for result in self.results)


def describe(spec: LaunchSpec) -> str:
    """A few words naming what `spec` runs."""
    if spec.image:
        return f"the Docker image {spec.image}"
    if spec.gymnasium_id:
        return f"Gymnasium {spec.gymnasium_id}"
    return f"factory {spec.factory}" + (f" (path {spec.path})" if spec.path else "")


async def check_launch_spec(
    spec: LaunchSpec,
    options: ComplianceOptions | None = None,
    *,
    ready_timeout: float = 60.0,
    call_timeout: float = 60.0,
) -> CheckRun:
    """Start the environment server for `spec`, run every check over a gRPC stream, stop it.

    Raises:
        LaunchError: the server did not start (its message names why, with the log tail).
    """
    with tempfile.TemporaryDirectory(prefix="platform-check-") as run_dir:
        instance = await launch_instance(spec, Path(run_dir), "check", ready_timeout=ready_timeout)
        try:
            results = await asyncio.to_thread(_run, instance.address, options, call_timeout)
            ended = await _how_it_ended(instance, results)
            log_tail = instance.log_tail()
        finally:
            await instance.stop()
    return CheckRun(results, log_tail, ended)


async def _how_it_ended(instance: InstanceProcess, results: list[CheckResult]) -> str:
    """When a check failed and the server is gone, how it ended (its exit code, or the signal
    that killed it): a crash that logs nothing leaves nothing else to go by."""
    if all(result.passed for result in results):
        return ""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + EXIT_WAIT_S
    while instance.returncode is None and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return instance.how_it_ended()


def _run(address: str, options: ComplianceOptions | None, call_timeout: float) -> list[CheckResult]:
    with GrpcConnection(address, call_timeout) as connection:
        return run_all(connection, options)
