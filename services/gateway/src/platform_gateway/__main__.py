"""`python -m platform_gateway`: settings, NATS, the app under uvicorn, until SIGINT/SIGTERM."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
import uvloop
from platform_bus.recent_spans import answer_recent_spans
from platform_bus import GracefulShutdown, NatsUnreachableError, connect
from platform_contracts.log_lines import setup_logging
from pydantic import ValidationError

from platform_gateway import log_redaction
from platform_gateway.app import create_app
from platform_gateway.config import Settings
from platform_gateway.transport_bounds import uvicorn_config
from platform_gateway.web_app import where

log = logging.getLogger("platform_gateway")


class _Server(uvicorn.Server):
    """uvicorn's server, except that after SIGINT/SIGTERM it returns (exit 0) instead of
    raising the signal again, so NATS is closed cleanly afterwards; the shutdown has a deadline
    and a second signal exits at once (`platform_bus.GracefulShutdown`)."""

    def __init__(self, config: uvicorn.Config, shutdown: GracefulShutdown) -> None:
        super().__init__(config)
        self.graceful = shutdown

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        self.graceful.install(on_request=lambda: self.handle_exit(signal.SIGTERM, None))
        self.graceful.waiting_for("the open HTTP connections and websockets to close")
        yield  # the handlers stay: a signal after serve() returned still counts


async def serve(settings: Settings) -> None:
    nc = await connect(settings.nats_url, name="platform-gateway", timeout=settings.nats_connect_timeout)
    await answer_recent_spans(nc)  # its own recent spans, for the trace view (of any replica)
    shutdown = GracefulShutdown("platform-gateway", logger=log)
    try:
        app = create_app(settings, nc)
        connect_host = "127.0.0.1" if settings.host in ("0.0.0.0", "", "::") else settings.host
        found = where(app.state.web_app, f"http://{connect_host}:{settings.port}")
        if settings.log_format == "json":
            log.info("%s", found)
        else:
            print(f"platform-gateway: {found}", flush=True)
        config = uvicorn_config(app, settings)  # the transport's bounds: platform_gateway.transport_bounds
        log_redaction.install()  # uvicorn configured its loggers above: no ?token= in their lines
        await _Server(config, shutdown).serve()
    finally:
        shutdown.begin()  # the deadline holds however the gateway stops
        shutdown.waiting_for("the NATS connection to close")
        if not nc.is_closed:
            await nc.close()
        shutdown.waiting_for("the event loop's last tasks")


def main() -> int:
    try:
        settings = Settings()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        print(f"platform-gateway: bad setting PLATFORM_{field.upper()}: {first['msg']}", file=sys.stderr)
        return 2
    setup_logging("gateway", settings.log_format)
    try:
        uvloop.run(serve(settings))
    except NatsUnreachableError as exc:
        print(f"platform-gateway: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    except OSError as exc:  # e.g. the port is taken
        print(f"platform-gateway: cannot serve on {settings.host}:{settings.port}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
