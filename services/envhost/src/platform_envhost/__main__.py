"""`python -m platform_envhost`: run one env host until SIGINT or SIGTERM."""

from __future__ import annotations

import logging
import os
import sys

# Instances are forked from this process while gRPC threads run; gRPC's fork handlers then
# crash the child (SIGSEGV before exec). They only matter for gRPC used across fork: off.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

import uvloop
from platform_bus import GracefulShutdown
from platform_contracts.log_lines import setup_logging
from pydantic import ValidationError

from platform_envhost.config import Settings
from platform_envhost.errors import EnvHostError

PROG = "platform_envhost"


async def run(settings: Settings) -> None:
    from platform_envhost.app import EnvHost

    host = EnvHost(settings)
    shutdown = GracefulShutdown(PROG, logger=logging.getLogger(PROG))
    shutdown.install()
    try:
        await host.start()
        await shutdown.requested.wait()
    finally:
        shutdown.begin()  # the deadline holds however the env host stops
        await host.stop(shutdown.waiting_for)
        shutdown.waiting_for("the event loop's last tasks")


def _settings_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    name = "PLATFORM_" + str(first["loc"][0]).upper() if first["loc"] else "settings"
    return f"bad setting {name}: {first['msg']}"


def main() -> int:
    try:
        settings = Settings()
        setup_logging("envhost", settings.log_format)
        # uvloop: the step path is callbacks on sockets (the step link, the instance links),
        # where libuv's loop costs less per message than asyncio's own.
        uvloop.run(run(settings))
    except ValidationError as exc:
        sys.stderr.write(f"{PROG}: error: {_settings_error(exc)}\n")
        return 2
    except EnvHostError as exc:
        sys.stderr.write(f"{PROG}: error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
