"""`python -m platform_envhost`: run one env host until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys

# Instances are forked from this process while gRPC threads run; gRPC's fork handlers then
# crash the child (SIGSEGV before exec). They only matter for gRPC used across fork: off.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")

from pydantic import ValidationError

from platform_envhost.config import Settings
from platform_envhost.errors import EnvHostError

PROG = "platform_envhost"


async def run(settings: Settings) -> None:
    from platform_envhost.app import EnvHost

    host = EnvHost(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await host.start()
        await stop.wait()
    finally:
        await host.stop()


def _settings_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    name = "PLATFORM_" + str(first["loc"][0]).upper() if first["loc"] else "settings"
    return f"bad setting {name}: {first['msg']}"


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings()
        asyncio.run(run(settings))
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
