"""`python -m platform_broker`: settings, connect, serve until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys

from platform_bus import GracefulShutdown, NatsUnreachableError, connect
from platform_bus.recent_spans import answer_recent_spans
from platform_contracts.log_lines import setup_logging
from platform_contracts.tracing import setup_tracing
from pydantic import ValidationError

from platform_broker.catalog import Catalog, load_catalog
from platform_broker.config import Settings
from platform_broker.errors import BrokerError
from platform_broker.pools import check_pool_envs, parse_pools
from platform_broker.service import BrokerService
from platform_broker.store import SessionStore

log = logging.getLogger("platform_broker")

DRAIN_TIMEOUT_S = 2.0

def fail(message: str) -> int:
    print(f"platform_broker: {message}", file=sys.stderr)
    return 1


async def serve(settings: Settings, catalog: Catalog, store: SessionStore, pools: dict[str, int]) -> int:
    shutdown = GracefulShutdown("platform_broker", logger=log)
    shutdown.install()
    stop = shutdown.requested
    try:
        nc = await connect(settings.nats_url, name="platform-broker", logger=log)
    except NatsUnreachableError as exc:
        await store.close()
        return fail(str(exc))
    await answer_recent_spans(nc)  # its recent spans, for the gateway's trace view
    service = BrokerService(nc, store, catalog, idle_timeout=settings.idle_timeout,
                            start_timeout=settings.start_timeout, pools=pools,
                            durable_steps=settings.durable_steps,
                            stream=settings.stream_shape)
    starting = asyncio.ensure_future(service.start())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():  # a signal while starting
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
            return 0
        failure = starting.exception()
        if isinstance(failure, BrokerError):
            return fail(str(failure))
        if failure is not None:
            return fail(f"cannot start: {str(failure).splitlines()[0] if str(failure) else repr(failure)}")
        await stopping
        log.info("broker stopping")
        return 0
    finally:
        shutdown.begin()  # the deadline holds however the broker stops
        stopping.cancel()
        await service.stop(shutdown.waiting_for)
        shutdown.waiting_for("the NATS connection to drain")
        with contextlib.suppress(Exception):  # NATS may be gone: drain briefly, then close
            await asyncio.wait_for(nc.drain(), DRAIN_TIMEOUT_S)
        with contextlib.suppress(Exception):
            await nc.close()
        shutdown.waiting_for("the session store to close")
        await store.close()
        shutdown.waiting_for("the event loop's last tasks")


def main() -> int:
    try:
        settings = Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        return fail(f"bad setting PLATFORM_{str(first['loc'][0]).upper()}: {first['msg']}")
    setup_logging("broker", settings.log_format)
    try:
        catalog = load_catalog(settings.catalog_path())
        pools = parse_pools(settings.pools)
        check_pool_envs(pools, catalog)
        store = SessionStore.from_url(settings.database_url)
    except BrokerError as exc:
        return fail(str(exc))
    setup_tracing("platform-broker")
    return asyncio.run(serve(settings, catalog, store, pools))


if __name__ == "__main__":
    sys.exit(main())
