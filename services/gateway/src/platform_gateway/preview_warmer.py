"""Previews made ahead: after the gateway starts, the missing previews of the entries that
PLATFORM_WARM_PREVIEWS names (`all`: every catalog entry) are made in the background, one at a
time, each only once no session is starting, so that the catalog page finds them cached and a
user's session start never shares the machine with a burst of preview sessions.

A preview that fails (an environment that times out, a robot that cannot be downloaded) is
logged with its reason and not tried again by the warmer until the gateway starts again; the
page's own request for it tries again and answers why it failed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from simulusion.control.v1 import control_pb2 as ctl

from platform_gateway.broker import BrokerClient
from platform_gateway.errors import GatewayError
from platform_gateway.previews import NoFramesError, PreviewCache

log = logging.getLogger(__name__)

ALL = "all"
START_DELAY_S = 2.0  # after the gateway's start: let the platform's first requests through
QUIET_POLL_S = 0.5  # how often a waiting warmer asks whether a session is still starting


def warmed_ids(setting: str) -> list[str] | None:
    """PLATFORM_WARM_PREVIEWS as the env ids to warm, in order; None for `all`, [] for none."""
    if setting.strip().lower() == ALL:
        return None
    return [part.strip() for part in setting.split(",") if part.strip()]


class PreviewWarmer:
    """Makes missing previews in the background, one at a time.

    Args:
        cache: where previews are made and kept (its per-entry lock is shared with the requests
            for previews, so a preview is never made twice).
        broker: the catalog, and whether a session is starting.
        ids: the entries to warm, in order; None: every catalog entry, in catalog order.
        start_delay: seconds after `start` before the first one.
    """

    def __init__(self, cache: PreviewCache, broker: BrokerClient, ids: Sequence[str] | None, *,
                 start_delay: float = START_DELAY_S) -> None:
        self.cache = cache
        self.broker = broker
        self.ids = None if ids is None else list(ids)
        self.start_delay = start_delay
        self.made: list[str] = []
        self.failed: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None and self.ids != []:
            self._task = asyncio.create_task(self.run(), name="preview-warmer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def run(self) -> None:
        """Warm each wanted entry whose preview is not on disk; returns when all were tried."""
        await asyncio.sleep(self.start_delay)
        try:
            entries = await self._entries()
        except GatewayError as exc:
            log.warning("previews ahead: the catalog could not be read: %s", exc.message)
            return
        missing = [e for e in entries if not self.cache.cached(e) and not self.cache.marker_path(e).is_file()]
        if not missing:
            return
        log.info("previews ahead: making %d in the background, one at a time (%s)", len(missing),
                 ", ".join(e.id for e in missing[:8]) + (", ..." if len(missing) > 8 else ""))
        for entry in missing:
            await self._until_no_session_starts()
            log.info("previews ahead: making the preview of %s", entry.id)
            try:
                await self.cache.get(entry)
            except NoFramesError:
                self.made.append(entry.id)  # its marker says why
                continue
            except GatewayError as exc:
                self.failed[entry.id] = exc.message
                log.warning("previews ahead: %s", exc.message)
                continue
            self.made.append(entry.id)
            log.info("previews ahead: made the preview of %s", entry.id)
        log.info("previews ahead: done (%d made, %d failed)", len(self.made), len(self.failed))

    async def _entries(self) -> list[ctl.CatalogEntry]:
        catalog = await self.broker.list_envs()
        if self.ids is None:
            return catalog
        by_id = {entry.id: entry for entry in catalog}
        unknown = [env_id for env_id in self.ids if env_id not in by_id]
        if unknown:
            log.warning("previews ahead: not in the catalog, skipped: %s", ", ".join(unknown))
        return [by_id[env_id] for env_id in self.ids if env_id in by_id]

    async def _until_no_session_starts(self) -> None:
        """Returns once no session (of any team, through any gateway) is starting."""
        while True:
            try:
                sessions = await self.broker.list_sessions()
            except GatewayError:
                sessions = []
            if not any(s.state == ctl.SESSION_STATE_STARTING for s in sessions):
                return
            await asyncio.sleep(QUIET_POLL_S)
