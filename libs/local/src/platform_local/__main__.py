"""`platform-server` (also `platform-run`, `python -m platform_local`): the whole platform in the
foreground until Ctrl-C. A service that exits unasked is started again (see
`platform_local.restarts`); one that keeps crashing stops the platform with its last lines.

Settings (environment, or the matching option):
    PLATFORM_HOST, PLATFORM_PORT      the gateway's address (127.0.0.1, 8000)
    PLATFORM_DATA_DIR                 NATS store, logs, database, env host runs (./data)
    PLATFORM_RECORDINGS               the recorder's output (./recordings)
    PLATFORM_NATS_URL                 use this NATS server instead of starting one
    PLATFORM_NATS_PORT                port of the NATS server started here (a free one)
    PLATFORM_LAUNCH_TIMEOUT           seconds to wait for the platform to answer (60)
    PLATFORM_STEP_TICKET_SECRET       the gateway's and env hosts' step ticket secret (a random
                                      one per run; empty: no direct step path)
    PLATFORM_MODE                     self-hosted (default) or managed: then the NATS started here
                                      has a user per service with only its subjects, and a random
                                      password each (environment instances get none)
    PLATFORM_POOLS                    warm instances per environment (default: classic control and
                                      Pong and Breakout, see `platform_local.launcher_defaults`;
                                      empty: none), filled in the background
    PLATFORM_WARM_PREVIEWS            previews made ahead in the background (default all; empty: none)
    PLATFORM_LOG_FORMAT               text (default) or json: every service's log, the children's
                                      output here and the launcher's own lines are one JSON object
                                      per line (`platform_contracts.log_lines`)
Every other PLATFORM_* variable passes through to the services.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from platform_contracts.log_lines import LogFormatError, json_line, log_format_from

from platform_local.launcher_defaults import (
    POOLS_VARIABLE,
    WARM_PREVIEWS_VARIABLE,
    launcher_pools,
    launcher_warm_previews,
)
from platform_local.errors import ConfigError, LocalPlatformError, ServiceExited
from platform_local.local_platform import LocalPlatform
from platform_local.restarts import RestartPolicy

SCRIPTS = ("platform-server", "platform-run")
"""The names the launcher is installed under (pyproject's scripts); the first is the spec's."""


def program_name(argv0: str | None = None) -> str:
    """The script's name as invoked (``platform-server`` under ``python -m platform_local``)."""
    name = Path(sys.argv[0] if argv0 is None else argv0).name
    return name if name in SCRIPTS else SCRIPTS[0]


def _number(env: Mapping[str, str], key: str, default: str,
            kind: type[int] | type[float] = int) -> int | float | None:
    raw = env.get(key, default)
    if raw == "":
        return None
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r} is not a {'number' if kind is float else 'port number'}") from None


def parse_args(argv: Sequence[str] | None, env: Mapping[str, str]) -> argparse.Namespace:
    """Options, each defaulting to its PLATFORM_* variable.

    Raises:
        ConfigError: a variable does not parse.
    """
    parser = argparse.ArgumentParser(prog=program_name(), description="Run the Simulusion platform locally.")
    parser.add_argument("--host", default=env.get("PLATFORM_HOST", "127.0.0.1"),
                        help="the API's bind address (PLATFORM_HOST; default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=_number(env, "PLATFORM_PORT", "8000"),
                        help="the API's port (PLATFORM_PORT; default 8000)")
    parser.add_argument("--data-dir", default=env.get("PLATFORM_DATA_DIR", "data"),
                        help="NATS store, logs, database, env host files (PLATFORM_DATA_DIR; default ./data)")
    parser.add_argument("--recordings", default=env.get("PLATFORM_RECORDINGS", "recordings"),
                        help="where recordings go (PLATFORM_RECORDINGS; default ./recordings)")
    parser.add_argument("--nats-url", default=env.get("PLATFORM_NATS_URL") or None,
                        help="use this NATS server, start none (PLATFORM_NATS_URL)")
    parser.add_argument("--nats-port", type=int, default=_number(env, "PLATFORM_NATS_PORT", ""),
                        help="port of the NATS server started here (PLATFORM_NATS_PORT; default a free one)")
    parser.add_argument("--start-timeout", type=float,
                        default=_number(env, "PLATFORM_LAUNCH_TIMEOUT", "60", float),
                        help="seconds to wait for the platform to answer (PLATFORM_LAUNCH_TIMEOUT; default 60)")
    parser.add_argument("--pools", default=launcher_pools(env),
                        help="warm instances per environment, e.g. cartpole=2,pong=1; empty: none (PLATFORM_POOLS; "
                             "default: classic control, Pong and Breakout)")
    parser.add_argument("--warm-previews", default=launcher_warm_previews(env),
                        help="previews made ahead in the background: all, env ids separated by commas, or empty "
                             "for none (PLATFORM_WARM_PREVIEWS; default all)")
    args = parser.parse_args(argv)
    try:
        args.log_format = log_format_from(env)
    except LogFormatError as exc:
        raise ConfigError(str(exc)) from None
    return args


class LauncherLines:
    """The launcher's own lines: plain (errors as `<prog>: message` on stderr), or JSON lines."""

    def __init__(self, prog: str, json_lines: bool = False) -> None:
        self.prog = prog
        self.json_lines = json_lines

    def info(self, message: str) -> None:
        print(json_line("launcher", message, logger="platform_local") if self.json_lines else message, flush=True)

    def error(self, message: str) -> None:
        line = (json_line("launcher", message, level="ERROR", logger="platform_local") if self.json_lines
                else f"{self.prog}: {message}")
        print(line, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the platform until SIGINT/SIGTERM or until a service keeps crashing; returns the exit status."""
    lines = LauncherLines(program_name())
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    platform: LocalPlatform | None = None
    try:
        args = parse_args(argv, os.environ)
        lines.json_lines = args.log_format == "json"
        ahead = {POOLS_VARIABLE: args.pools, WARM_PREVIEWS_VARIABLE: args.warm_previews}
        platform = LocalPlatform(args.data_dir, args.port, ahead,
                                 host=args.host, nats_url=args.nats_url,
                                 nats_port=args.nats_port, recordings_dir=args.recordings,
                                 echo=sys.stdout, start_timeout=args.start_timeout,
                                 restart_policy=RestartPolicy(), say=lines.error)
        lines.info(f"Starting Simulusion (logs in {platform.logs_dir}) ...")
        platform.start(should_abort=stop.is_set)
        if not stop.is_set():
            lines.info(f"Simulusion is running at {platform.url}/ (the web app; API docs at /docs) — Ctrl-C to stop")
            if args.pools:
                lines.info(f"Warming instances in the background ({POOLS_VARIABLE}={args.pools})")
        while not stop.wait(0.25):
            platform.keep_running()
    except ServiceExited as error:  # a crash loop, or NATS that would not start again
        lines.error(error.report())
        return _stopped(platform, 1)
    except LocalPlatformError as error:
        lines.error(str(error))
        return _stopped(platform, 1)
    lines.info("Stopping Simulusion ...")
    status = _stopped(platform, 0)
    lines.info("Stopped.")
    return status


def _stopped(platform: LocalPlatform | None, status: int) -> int:
    if platform is not None:
        platform.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
