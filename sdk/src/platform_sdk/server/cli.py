"""`python -m platform_sdk`: host one Gymnasium environment over the environment protocol.

Prints exactly one line `READY <address>` on stdout once serving. Bad arguments, a factory
that cannot be imported or raises, or spaces the protocol cannot carry: exit 2 with one line
on stderr. SIGTERM or SIGINT: stop and exit 0. Its log follows `PLATFORM_LOG_FORMAT` (text, or
json: one JSON object per line, service `instance`; platform_contracts.log_lines); the READY
line is printed as it is either way (a launcher wraps it, platform_sdk.launch.instance_processes).

`--transport grpc` (the default) serves the gRPC stream `Environment/Connect`: what users'
servers, `platform-check` and Docker images speak. `--transport frames` (a "unix:" address
only) serves the same messages as length-prefixed frames (`platform_sdk.server.frame_server`):
what the env host asks of the instances it starts itself, as gRPC's CPU cost per step was ~50
times a CartPole step's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from platform_contracts.log_lines import LogFormatError, log_format_from, setup_logging
from platform_contracts.limits import DEFAULT_JPEG_QUALITY, MAX_JPEG_QUALITY, MIN_JPEG_QUALITY
from platform_contracts.session_kwargs import ENDLESS, WORLD_CHANGES
from platform_contracts.world_changes import WorldChange, WorldChangeError

from platform_sdk.server.errors import StartupError

if TYPE_CHECKING:
    from platform_sdk.server.instance import EnvInstance
    from platform_sdk.server.vector import VectorInstance

PROG = "python -m platform_sdk"
INSTANCE_SERVICE = "instance"
"""The `service` of an environment server's JSON log lines."""
DEFAULT_LISTEN = "127.0.0.1:50051"
TRANSPORTS = ("grpc", "frames")

log = logging.getLogger("platform_sdk.server")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage block
        raise StartupError(f"{message} (see {PROG} --help)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line.

    Raises:
        StartupError: the arguments are malformed.
    """
    parser = _Parser(
        prog=PROG, description="Host one Gymnasium environment over the environment protocol (gRPC)."
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--gym-id", default="", help="a registered Gymnasium id, e.g. CartPole-v1")
    source.add_argument("--factory", default="", help="'module:function' returning the environment")
    parser.add_argument(
        "--path", action="append", default=[], help="a folder put on sys.path for --factory (repeatable)"
    )
    kwargs = parser.add_mutually_exclusive_group()
    kwargs.add_argument("--kwargs", default="{}", help="keyword arguments of the environment, a JSON object")
    kwargs.add_argument("--kwargs-file", default="",
                        help="a file holding --kwargs' JSON object (the launcher's way: no size limit, not on the "
                        "command line)")
    parser.add_argument(
        "--listen", default=DEFAULT_LISTEN, help="unix:/path/x.sock or HOST:PORT (port 0 picks one)"
    )
    parser.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default="grpc",
        help="grpc (the environment protocol's gRPC stream) or frames (length-prefixed messages on a "
        "unix: socket, what the env host uses for the instances it starts)",
    )
    parser.add_argument("--jpeg-quality", type=int, default=DEFAULT_JPEG_QUALITY,
                        help=f"quality of rendered frames, {MIN_JPEG_QUALITY}-{MAX_JPEG_QUALITY}")
    parser.add_argument(
        "--num-envs",
        type=int,
        default=1,
        help="copies of the environment to host (a vector instance when > 1)",
    )
    args = parser.parse_args(argv)
    if args.transport == "frames" and not args.listen.startswith("unix:"):
        raise StartupError(f"--transport frames needs a 'unix:/path/x.sock' --listen address, not {args.listen!r}")
    source_name = "--kwargs"
    if args.kwargs_file:
        source_name = f"--kwargs-file {args.kwargs_file}"
        try:
            args.kwargs = Path(args.kwargs_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise StartupError(f"--kwargs-file cannot be read: {exc}") from None
    try:
        args.kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as exc:
        raise StartupError(f"{source_name} is not valid JSON: {exc}") from None
    if not isinstance(args.kwargs, dict):
        raise StartupError(f"{source_name} must be a JSON object, not {type(args.kwargs).__name__}")
    if not 1 <= args.jpeg_quality <= 100:
        raise StartupError(f"--jpeg-quality must be between 1 and 100, not {args.jpeg_quality}")
    if args.num_envs < 1:
        raise StartupError(f"--num-envs must be at least 1, not {args.num_envs}")
    # The platform's own kwargs, not the environment's (platform_contracts.session_kwargs): the
    # env host hands them on with the environment's kwargs, where images built with older SDKs look for them too.
    args.endless = args.kwargs.pop(ENDLESS, False)
    if not isinstance(args.endless, bool):
        raise StartupError(f"the {ENDLESS!r} kwarg must be true or false, not {args.endless!r}")
    # As written: parsed and checked once, against the live environment, in build_instance.
    args.world_changes = args.kwargs.pop(WORLD_CHANGES, None)
    return args


def _claim_stdout() -> TextIO:
    """Keep stdout for the READY line: everything else written to it (a print in an
    environment, pygame's banner) goes to stderr instead."""
    ready = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return ready


async def serve(args: argparse.Namespace, ready_stream: TextIO | None = None) -> None:
    """Build the environment, serve it until SIGTERM or SIGINT, then close it.

    Args:
        args: the parsed command line.
        ready_stream: where the READY line goes (stdout by default).
    """
    from platform_contracts.tracing import setup_tracing

    from platform_sdk.server.servicer import socket_path, start_server

    instance = build_instance(args, setup_tracing("platform-env-server"))
    try:
        server, address = await start_server(instance, args.listen)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        ready_stream = ready_stream or sys.stdout
        ready_stream.write(f"READY {address}\n")
        ready_stream.flush()
        log.info("serving %s on %s", instance.env_id, address)
        try:
            await stop.wait()
        finally:
            await server.stop(grace=0.5)
            path = socket_path(address)
            if path and os.path.exists(path):
                os.unlink(path)
    finally:
        instance.close()


def serve_frames(args: argparse.Namespace, ready_stream: TextIO | None = None) -> None:
    """`serve` for `--transport frames`: build the environment, serve it over frames in this
    (the main) thread until SIGTERM or SIGINT, then close it. No event loop: see `frame_server`.
    """
    from platform_contracts.tracing import setup_tracing

    from platform_sdk.server import frame_server

    instance = build_instance(args, setup_tracing("platform-env-server"))
    try:
        frame_server.serve_frames(instance, args.listen, ready_stream or sys.stdout, instance.env_id)
    finally:
        instance.close()


def build_instance(args: argparse.Namespace, tracer: Any = None) -> EnvInstance | VectorInstance:
    """The instance the parsed command line asks for: one `EnvInstance`, or with `--num-envs`
    N > 1 a `VectorInstance` of N.

    Raises:
        StartupError: an environment cannot be built or its spaces cannot be carried.
    """
    from platform_envs.world_change_timeline import checked_timeline, with_timeline

    from platform_sdk.server.factory import build_env
    from platform_sdk.server.instance import EnvInstance
    from platform_sdk.server.vector import VectorInstance

    subs: list[EnvInstance] = []
    changes: tuple[WorldChange, ...] | None = None  # checked against the first: the others are the same model
    try:
        for _ in range(args.num_envs):  # each with its own timeline (and step count)
            env, env_id = build_env(args.gym_id, args.factory, args.path, args.kwargs, endless=args.endless)
            try:
                if changes is None:
                    try:
                        changes = checked_timeline(env, getattr(args, "world_changes", None), env_id)
                    except WorldChangeError as exc:
                        raise StartupError(str(exc)) from None
                env = with_timeline(env, changes)
                subs.append(
                    EnvInstance(
                        env, env_id, jpeg_quality=args.jpeg_quality, tracer=tracer, endless=args.endless
                    )
                )
            except StartupError:
                env.close()
                raise
    except StartupError:
        for sub in subs:
            sub.close()
        raise
    return subs[0] if len(subs) == 1 else VectorInstance(subs, tracer=tracer)


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server; returns the exit code (0 after a signal, 2 when it cannot start)."""
    try:
        setup_logging(INSTANCE_SERVICE, log_format_from(os.environ))
    except LogFormatError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 2
    signal.signal(signal.SIGTERM, _exit_cleanly)  # until serving: a SIGTERM while building exits 0
    try:
        args = parse_args(argv)
        # headless: frames are rendered off screen (rgb_array), never shown or heard
        for name, value in (
            ("PYGAME_HIDE_SUPPORT_PROMPT", "1"),
            ("SDL_VIDEODRIVER", "dummy"),
            ("SDL_AUDIODRIVER", "dummy"),
        ):
            os.environ.setdefault(name, value)
        if args.transport == "frames":
            serve_frames(args, _claim_stdout())
        else:
            asyncio.run(serve(args, _claim_stdout()))
    except StartupError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        sys.stderr.flush()
        return 2
    except KeyboardInterrupt:  # a SIGINT before the handlers were installed
        return 0
    return 0
