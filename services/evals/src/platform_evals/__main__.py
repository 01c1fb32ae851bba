"""`python -m platform_evals`: settings, connect, serve the evals subjects until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys

from platform_bus import GracefulShutdown, NatsUnreachableError, connect
from platform_bus.recent_spans import answer_recent_spans
from platform_contracts.log_lines import setup_logging
from platform_contracts.tracing import setup_tracing
from platform_database import DatabaseUnavailableError, DatabaseUrlError
from pydantic import ValidationError

from platform_evals.config import Settings
from platform_evals.service import EvalsService

log = logging.getLogger("platform_evals")

DRAIN_TIMEOUT_S = 2.0


def _fail(message: str) -> int:
    print(f"platform_evals: {message}", file=sys.stderr, flush=True)
    return 1


async def _run(settings: Settings) -> int:
    shutdown = GracefulShutdown("platform_evals", logger=log)
    shutdown.install()
    try:
        nc = await connect(settings.nats_servers, name="platform-evals", logger=log)
    except NatsUnreachableError as exc:
        return _fail(str(exc))
    await answer_recent_spans(nc)  # its recent spans, for the gateway's trace view
    try:
        service = await EvalsService.open(nc, settings)
        await service.start()
    except (ValueError, OSError, DatabaseUrlError, DatabaseUnavailableError) as exc:
        await nc.close()
        return _fail(str(exc))
    await shutdown.requested.wait()
    log.info("stopping")
    shutdown.begin()
    shutdown.waiting_for("the requests in progress")
    await service.stop()
    shutdown.waiting_for("the NATS connection to drain")
    try:
        await asyncio.wait_for(nc.drain(), DRAIN_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - already closed, or NATS gone
        log.debug("drain: %s", exc)
        with contextlib.suppress(Exception):
            await nc.close()
    return 0


def main() -> int:
    try:
        settings = Settings()
    except ValidationError as exc:
        errors = "; ".join(f"PLATFORM_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        return _fail(f"bad configuration: {errors}")
    setup_logging("evals", settings.log_format, os.environ.get("PLATFORM_LOG_LEVEL", "INFO"))
    setup_tracing("platform-evals")
    return asyncio.run(_run(settings))


if __name__ == "__main__":
    sys.exit(main())
