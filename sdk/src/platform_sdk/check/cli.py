"""`platform-check`: check a custom environment before it is hosted.

    platform-check --factory my_module:make_env --path ./my_envs [--kwargs JSON]
    platform-check --image my-org/my-simulator:latest
    platform-check --gym-id CartPole-v1

Prints each check with PASS, FAIL or SKIP and a message. Exit codes: 0 when every check
passes, 1 when any fails, 2 (one line on stderr) on bad arguments or when the environment
does not start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from platform_contracts.compliance import CheckResult, ComplianceOptions

PROG = "platform-check"
EXIT_PASSED, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """Bad arguments, or an environment that does not start: one line for stderr."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage block
        raise UsageError(f"{message} (see {PROG} --help)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse and validate the command line.

    Raises:
        UsageError: the arguments are malformed.
    """
    parser = _Parser(prog=PROG, description="Check that an environment complies with the environment protocol.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--factory", default="", help="'module:function' returning the environment")
    source.add_argument("--image", default="", help="a Docker image serving the environment protocol")
    source.add_argument("--gym-id", default="", help="a registered Gymnasium id, e.g. CartPole-v1")
    parser.add_argument("--path", default="", help="the folder holding the factory's module")
    parser.add_argument("--kwargs", default="{}", help="keyword arguments of the environment, a JSON object")
    parser.add_argument("--seed", type=int, default=ComplianceOptions.seed, help="the seed of every reset")
    parser.add_argument("--steps", type=int, default=ComplianceOptions.steps, help="steps per rollout")
    parser.add_argument(
        "--ready-timeout", type=float, default=60.0, help="seconds for the server to start (an image may be pulled)"
    )
    parser.add_argument("--call-timeout", type=float, default=60.0, help="seconds to wait for each response")
    parser.add_argument("-v", "--verbose", action="store_true", help="print the server's last log lines")
    args = parser.parse_args(argv)
    try:
        args.kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--kwargs is not valid JSON: {exc}") from None
    if not isinstance(args.kwargs, dict):
        raise UsageError(f"--kwargs must be a JSON object, not {type(args.kwargs).__name__}")
    if args.path:
        if not args.factory:
            raise UsageError("--path only goes with --factory")
        path = Path(args.path).expanduser().resolve()
        if not path.is_dir():
            raise UsageError(f"--path {args.path!r} is not a folder")
        args.path = str(path)
    if args.factory and args.factory.count(":") != 1:
        raise UsageError(f"--factory must be 'module:function', not {args.factory!r}")
    if args.steps < 1:
        raise UsageError(f"--steps must be at least 1, not {args.steps}")
    if args.ready_timeout <= 0 or args.call_timeout <= 0:
        raise UsageError("--ready-timeout and --call-timeout must be positive")
    return args


def report(results: Sequence[CheckResult], out: TextIO) -> None:
    """Print one line per check, then a summary line."""
    width = max((len(r.name) for r in results), default=0)
    out.writelines(f"{result.status}  {result.name:<{width}}  {result.message}\n" for result in results)
    failed = [r.name for r in results if not r.passed]
    summary = f"{len(results)} checks: {len(results) - len(failed)} passed, {len(failed)} failed"
    out.write(summary + (f" ({', '.join(failed)})\n" if failed else "\n"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run platform-check; returns the exit code."""
    from platform_sdk.check.runner import check_launch_spec, describe
    from platform_sdk.launch.instance_launch import LaunchError, LaunchSpec

    try:
        args = parse_args(argv)
    except UsageError as exc:
        return _fail(str(exc))
    spec = LaunchSpec(
        gymnasium_id=args.gym_id, factory=args.factory, path=args.path, kwargs=args.kwargs, image=args.image
    )
    options = ComplianceOptions(seed=args.seed, steps=args.steps)
    print(f"{PROG}: checking {describe(spec)}", flush=True)
    try:
        run = asyncio.run(
            check_launch_spec(spec, options, ready_timeout=args.ready_timeout, call_timeout=args.call_timeout)
        )
    except LaunchError as exc:
        reason = _launch_reason(exc)
        return _fail(reason if spec.image and spec.image in reason else f"{describe(spec)} did not start: {reason}")
    except KeyboardInterrupt:
        return _fail("interrupted")
    report(run.results, sys.stdout)
    if run.server_ended:
        print(f"{PROG}: the environment server {run.server_ended} during the checks")
    if args.verbose and run.log_tail:
        print("--- the environment server's last log lines ---\n" + run.log_tail)
    return EXIT_PASSED if run.passed else EXIT_FAILED


def _launch_reason(exc: Exception) -> str:
    """One line: why the launch failed, with the server's own error line where it printed one."""
    first = str(exc.args[0] if exc.args else exc).splitlines()[0]
    lines = [line.strip() for line in getattr(exc, "log_tail", "").splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line.lower()]
    detail = errors[-1] if errors else (lines[-1] if lines else "")
    return f"{first}: {detail}" if detail else first


def _fail(message: str) -> int:
    sys.stdout.flush()
    sys.stderr.write(f"{PROG}: error: {message}\n")
    sys.stderr.flush()
    return EXIT_ERROR
