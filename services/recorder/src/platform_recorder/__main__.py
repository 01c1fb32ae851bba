"""`python -m platform_recorder`: settings, connect, run the recorder until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import os
import contextlib
import sys
from typing import Any
from pathlib import Path

from platform_bus import GracefulShutdown, NatsUnreachableError, connect
from platform_bus.recent_spans import answer_recent_spans
from platform_contracts.log_lines import setup_logging
from platform_contracts.tracing import setup_tracing
from pydantic import ValidationError

from platform_recorder.config import Settings
from platform_recorder.errors import RecorderError
from platform_recorder.service import RecorderService
from platform_recorder.storage.interface import Storage, StorageConfigError
from platform_recorder.storage.opening import storage_from_settings

log = logging.getLogger("platform_recorder")

DRAIN_TIMEOUT_S = 2.0


def _fail(message: str) -> int:
    print(f"platform_recorder: {message}", file=sys.stderr, flush=True)
    return 1


def _writable_folder(path: Path, what: str) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        if not os.access(path, os.W_OK):
            raise PermissionError("not writable")
    except OSError as exc:
        raise StorageConfigError(f"cannot use the {what} {path}: {exc}") from None


def _open_storage(settings: Settings) -> Storage:
    """The recordings storage (S3: the bucket is made when missing, the spool folder too).

    Raises:
        RecorderError: a setting to fix (named) or a storage that cannot be used.
    """
    storage = storage_from_settings(
        settings.recordings,
        endpoint=settings.s3_endpoint,
        access_key=settings.s3_access_key,
        secret_key=settings.s3_secret_key.get_secret_value(),
        region=settings.s3_region,
        secure=settings.s3_secure,
    )
    if storage.local_root is not None:
        _writable_folder(storage.local_root, "recordings folder")
    else:
        _writable_folder(settings.recorder_spool, "spool folder (PLATFORM_RECORDER_SPOOL)")
    return storage


async def _run(settings: Settings) -> int:
    shutdown = GracefulShutdown("platform_recorder", logger=log)
    shutdown.install()
    stop = shutdown.requested
    setup_tracing("platform-recorder")
    try:
        storage = await asyncio.to_thread(_open_storage, settings)
    except RecorderError as exc:
        return _fail(str(exc))
    try:
        nc = await connect(settings.nats_servers, name="platform-recorder", logger=log)
    except NatsUnreachableError as exc:
        return _fail(str(exc))
    await answer_recent_spans(nc)  # its recent spans, for the gateway's trace view
    service = RecorderService(
        nc,
        storage,
        batch=settings.recorder_batch,
        fetch_timeout=settings.recorder_fetch_timeout,
        ack_wait=settings.recorder_ack_wait,
        meta_interval=settings.recorder_meta_interval,
        gather=settings.recorder_gather,
        stream=settings.stream_shape,
        spool=settings.recorder_spool if settings.uses_s3 else None,
        recorder_id=settings.recorder_name,
        lease_s=settings.recorder_lease_s,
    )
    try:
        await service.start()
    except Exception as exc:  # noqa: BLE001 - any start failure is one line and exit 1
        await nc.close()
        return _fail(f"cannot start: {type(exc).__name__}: {exc}")
    assert service.failed is not None
    waiter = asyncio.create_task(stop.wait())
    watched: list[asyncio.Future[Any]] = [waiter, service.failed]
    await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
    failed = service.failed.done() and not stop.is_set()
    if failed and service.failed.exception() is not None:
        log.error("a consumer loop failed: %s", service.failed.exception())
    waiter.cancel()
    log.info("stopping")
    shutdown.begin()  # the deadline holds however the recorder stops
    shutdown.waiting_for("the batch in progress to be written and acked")
    await service.stop()
    shutdown.waiting_for("the NATS connection to drain")
    try:
        await asyncio.wait_for(nc.drain(), DRAIN_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - already closed, or NATS gone
        log.debug("drain: %s", exc)
        with contextlib.suppress(Exception):
            await nc.close()
    shutdown.waiting_for("the event loop's last tasks")
    return 1 if failed else 0


def main() -> int:
    try:
        settings = Settings()
    except ValidationError as exc:
        errors = "; ".join(
            f"PLATFORM_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors()
        )
        return _fail(f"bad configuration: {errors}")
    try:
        settings.check_required()
    except StorageConfigError as exc:
        return _fail(str(exc))
    setup_logging("recorder", settings.log_format, os.environ.get("PLATFORM_LOG_LEVEL", "INFO"))
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # S3 retries: a failure is logged once, by us
    if settings.recorder_nice:
        try:
            os.nice(settings.recorder_nice)  # before any thread starts: they inherit it
        except OSError as exc:
            log.warning("cannot lower the recorder's priority: %s", exc)
    return asyncio.run(_run(settings))


if __name__ == "__main__":
    sys.exit(main())
