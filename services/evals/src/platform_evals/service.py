"""The evals service: the `evals` tables, the storage of their logs, the machines service as
the way to run them, and the NATS API."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from platform_bus.metrics_responder import MetricsResponder
from platform_database import open_engine

from platform_evals.config import Settings
from platform_evals.eval_runs import EvalRuns
from platform_evals.eval_store import EvalStore
from platform_evals.evals_api import EvalsApi
from platform_evals.log_storage import open_log_storage
from platform_evals.machines_client import MachinesClient
from platform_evals.metrics import EvalsMetrics

log = logging.getLogger(__name__)


class EvalsService:
    def __init__(self, nc: Any, settings: Settings) -> None:
        """Raises ValueError (a storage setting), DatabaseUrlError."""
        self.engine = open_engine(settings.database_url)
        self.store = EvalStore(self.engine)
        self.runs = EvalRuns(self.store, MachinesClient(nc), open_log_storage(settings), settings.evals_poll_interval)
        self.api = EvalsApi(nc, self.runs)
        self.metrics = EvalsMetrics(self.store)
        self._metrics_responder = MetricsResponder(nc, self.metrics.service)

    @classmethod
    async def open(cls, nc: Any, settings: Settings) -> EvalsService:
        return await asyncio.to_thread(cls, nc, settings)

    async def start(self) -> None:
        await self.store.create_tables()
        await self.api.start()
        await self._metrics_responder.start()
        await self.runs.resume()
        log.info("evals service ready")

    async def stop(self) -> None:
        await self._metrics_responder.stop()
        await self.api.stop()
        await self.runs.stop()
        await self.engine.dispose()
