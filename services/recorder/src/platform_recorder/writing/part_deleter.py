"""Deleting the part files of listed episodes off the writer's thread.

Once a durable meta.json lists an episode its part file is of no more use, and its delete needs
no sync: a part that is still there after a crash is finished again, idempotently, by
`Recording.load` + `settle` (its npz is kept, its entry is the same), and readers take a part of
a listed episode for no open episode. But an unlink waits for the filesystem's journal, which the
writer's syncs keep busy: done in line, the deletes of a vector session's short episodes took a
quarter of the writer's time. Here one thread deletes them, in order, while the writer goes on.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

log = logging.getLogger(__name__)


class PartDeleter:
    """Deletes files, and then removes folders left empty, in the order asked, on its own thread."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Path, bool] | None] = queue.SimpleQueue()
        self._pending = 0
        self._idle = threading.Condition()
        self._thread: threading.Thread | None = None

    def delete(self, path: Path) -> None:
        """Delete `path` soon (a missing one is no error)."""
        self._put((path, False))

    def remove_empty_folder(self, folder: Path) -> None:
        """Remove `folder` soon, after the deletes asked before, if it is empty then."""
        self._put((folder, True))

    def _put(self, item: tuple[Path, bool]) -> None:
        with self._idle:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="recorder-part-deleter", daemon=True)
                self._thread.start()
        self._queue.put(item)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            path, folder = item
            try:
                if folder:
                    path.rmdir()
                else:
                    path.unlink(missing_ok=True)
            except OSError as exc:  # not empty, or gone: left for the next recovery
                if not folder:
                    log.warning("could not delete %s: %s", path, exc)
            with self._idle:
                self._pending -= 1
                self._idle.notify_all()

    def wait(self) -> None:
        """Return once every delete asked so far is done."""
        with self._idle:
            self._idle.wait_for(lambda: self._pending == 0)

    def stop(self) -> None:
        """Finish the deletes asked, then end the thread."""
        self.wait()
        with self._idle:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()
