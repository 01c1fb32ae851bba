"""A lock file per session partition in the shared spool: whoever writes a partition's recordings
holds it (an exclusive `flock`, let go by the kernel when the holder dies).

A partition's lease (platform_recorder.partitions) says who should write it; the lock makes sure
the previous writer has stopped before the next one reads what it left: a recorder that lost its
lease in the middle of a long batch finishes that batch, and only then lets go of the lock. The
files are `<spool>/.partition-locks/<p>.lock` (a name no recording can have).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

LOCKS_DIR = ".partition-locks"
POLL_S = 0.2


class PartitionLock:
    """The lock file of `partition` under `spool`."""

    def __init__(self, spool: Path, partition: int) -> None:
        self.path = spool / LOCKS_DIR / f"{partition}.lock"
        self.partition = partition
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock unless another process holds it; True when this one holds it now."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    async def acquire(self, wanted: Callable[[], bool]) -> bool:
        """Wait for the lock while `wanted()`; True once held, False when no longer wanted."""
        said = False
        while wanted():
            if self.try_acquire():
                if said:
                    log.info("partition %d: its previous writer let go; taking it over", self.partition)
                return True
            if not said:
                log.info("partition %d: waiting for its previous writer to finish its batch", self.partition)
                said = True
            await asyncio.sleep(POLL_S)
        return False

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
