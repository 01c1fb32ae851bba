"""`python -m platform_bus.healthcheck [SERVICE]`: is this container's service up and serving?

The health check of the platform's images (their HEALTHCHECK, Compose's `healthcheck:`). Exit 0
and one line when it is; exit 1 and one line saying why when it is not.

- gateway: `GET /healthz` on 127.0.0.1 at `PLATFORM_PORT` (8000) answers 200 and says NATS is
  connected;
- broker, envhost, recorder, machines, evals: a request on a subject the service answers
  (`SUBJECTS`), through the NATS of `PLATFORM_NATS_URL` as the service's own user; any answer
  counts (an error answer too: the service is subscribed and serving); nobody subscribed, no
  answer in time or NATS unreachable is unhealthy. The env host's subject carries its id, so it
  needs `PLATFORM_ENVHOST_ID` set;
- environment-server (`python -m platform_sdk ... --listen HOST:PORT`, an env pod's process): its
  port accepts a TCP connection on 127.0.0.1 (`--address`, default the process's `--listen` port).

SERVICE defaults to the one process 1 runs (`python -m platform_<service>` in /proc/1/cmdline),
so one HEALTHCHECK line serves every service of an image.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from platform_contracts import subjects

from platform_bus.connection import NatsUnreachableError, connect
from platform_bus.messaging import BusUnavailableError, request

DEFAULT_NATS_URL = "nats://127.0.0.1:4222"
DEFAULT_GATEWAY_PORT = 8000
TIMEOUT_S = 3.0
ENVHOST_ID_SETTING = "PLATFORM_ENVHOST_ID"


def _envhost_subject(environ: Mapping[str, str]) -> str:
    host_id = environ.get(ENVHOST_ID_SETTING, "")
    if not host_id:
        raise HealthCheckError(f"envhost: {ENVHOST_ID_SETTING} is unset, so its subject is unknown "
                               "(set it: the env host's default id changes with every process)")
    return subjects.envhost_list(host_id)


# A cheap subject each service answers; the request is empty (a default protobuf message).
SUBJECTS: dict[str, Callable[[Mapping[str, str]], str]] = {
    "broker": lambda environ: subjects.BROKER_LIST_ENVS,
    "envhost": _envhost_subject,
    "recorder": lambda environ: subjects.RECORDER_GET_SNAPSHOT,  # an empty id: a "not found" answer
    "machines": lambda environ: subjects.MACHINES_SSH_KEY,
    "evals": lambda environ: subjects.EVALS_GET,  # an empty id: a "not found" answer
}
ENVIRONMENT_SERVER = "environment-server"  # python -m platform_sdk: one environment, no NATS
SERVICES = ("gateway", *SUBJECTS, ENVIRONMENT_SERVER)
DEFAULT_INSTANCE_PORT = 50051


class HealthCheckError(Exception):
    """Unhealthy, or unknown what to check; the message is the one line to print."""


def _arguments(cmdline: bytes) -> list[str]:
    return [arg.decode(errors="replace") for arg in cmdline.split(b"\0") if arg]


def service_of_process(cmdline: bytes) -> str | None:
    """The service a process runs, from its /proc/<pid>/cmdline (`... -m platform_<service>`;
    `-m platform_sdk` is an environment server)."""
    args = _arguments(cmdline)
    for flag, module in zip(args, args[1:], strict=False):
        name = module.removeprefix("platform_")
        if flag == "-m" and module == "platform_sdk":
            return ENVIRONMENT_SERVER
        if flag == "-m" and module.startswith("platform_") and name in ("gateway", *SUBJECTS):
            return name
    return None


def listen_port_of_process(cmdline: bytes) -> int:
    """The port of an environment server's `--listen HOST:PORT` (or `--listen=...`); the
    instance port when absent or unreadable."""
    args = _arguments(cmdline)
    for index, arg in enumerate(args):
        if arg == "--listen" and index + 1 < len(args):
            address = args[index + 1]
        elif arg.startswith("--listen="):
            address = arg.removeprefix("--listen=")
        else:
            continue
        port = address.rpartition(":")[2]
        if port.isdigit():
            return int(port)
    return DEFAULT_INSTANCE_PORT


def check_environment_server(port: int, timeout: float = TIMEOUT_S) -> str:
    """An environment server's port accepts a connection on this host."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=timeout).close()
    except OSError as exc:
        raise HealthCheckError(f"{ENVIRONMENT_SERVER}: nothing accepts connections on 127.0.0.1:{port} "
                               f"({exc.strerror or exc})") from None
    return f"{ENVIRONMENT_SERVER}: healthy (127.0.0.1:{port} accepts connections)"


def check_gateway(environ: Mapping[str, str], timeout: float = TIMEOUT_S) -> str:
    """The gateway's /healthz, on this host."""
    url = f"http://127.0.0.1:{environ.get('PLATFORM_PORT') or DEFAULT_GATEWAY_PORT}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise HealthCheckError(f"gateway: {url} answered {exc.code}") from None
    except (OSError, ValueError) as exc:
        raise HealthCheckError(f"gateway: {url}: {getattr(exc, 'reason', None) or exc}") from None
    if body.get("nats") != "connected":
        raise HealthCheckError(f"gateway: {url} says NATS is {body.get('nats', 'unknown')}")
    return f"gateway: healthy ({url})"


async def check_over_nats(service: str, environ: Mapping[str, str], timeout: float = TIMEOUT_S) -> str:
    """A request to `service` on its subject; any answer within `timeout` is healthy."""
    subject = SUBJECTS[service](environ)
    url = environ.get("PLATFORM_NATS_URL") or DEFAULT_NATS_URL
    try:
        nc = await connect(url, name=f"healthcheck-{service}", timeout=timeout)
    except NatsUnreachableError as exc:
        raise HealthCheckError(f"{service}: {exc}") from None
    try:
        await request(nc, subject, b"", timeout=timeout, service=service)
    except BusUnavailableError as exc:
        raise HealthCheckError(str(exc)) from None
    finally:
        await nc.close()
    return f"{service}: healthy (answers {subject})"


def check(service: str, environ: Mapping[str, str], timeout: float = TIMEOUT_S,
          port: int = DEFAULT_INSTANCE_PORT) -> str:
    """Check `service` (`port`: an environment server's); the line to print when healthy.

    Raises:
        HealthCheckError: unhealthy, with the reason.
    """
    if service == "gateway":
        return check_gateway(environ, timeout)
    if service == ENVIRONMENT_SERVER:
        return check_environment_server(port, timeout)
    return asyncio.run(check_over_nats(service, environ, timeout))


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None,
         init_cmdline: Path = Path("/proc/1/cmdline")) -> int:
    parser = argparse.ArgumentParser(prog="python -m platform_bus.healthcheck",
                                     description="Check that this container's platform service is up and serving.")
    parser.add_argument("service", nargs="?", choices=SERVICES,
                        help="the service to check (default: the one process 1 runs)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds to wait (default: %(default)s)")
    parser.add_argument("--port", type=int, default=None,
                        help=f"{ENVIRONMENT_SERVER}: its port (default: process 1's --listen port, else "
                             f"{DEFAULT_INSTANCE_PORT})")
    args = parser.parse_args(argv)
    environ = os.environ if environ is None else environ
    service = args.service
    port = args.port
    if service is None or (service == ENVIRONMENT_SERVER and port is None):
        try:
            cmdline = init_cmdline.read_bytes()
        except OSError as exc:
            print(f"healthcheck: cannot read {init_cmdline} ({exc.strerror}): name the service", file=sys.stderr)
            return 1
        service = service or service_of_process(cmdline)
        port = port or listen_port_of_process(cmdline)
        if service is None:
            print(f"healthcheck: process 1 runs no platform service (python -m platform_<service>): "
                  f"name one of {', '.join(SERVICES)}", file=sys.stderr)
            return 1
    try:
        print(check(service, environ, args.timeout, port or DEFAULT_INSTANCE_PORT))
    except HealthCheckError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
