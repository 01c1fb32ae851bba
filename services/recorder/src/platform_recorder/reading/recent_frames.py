"""The JPEG frames of the episodes read last, kept in memory.

A replay asks for frames one row at a time (`GET .../frames/{row}`), and the rows of an
episode's `frames` member can only be reached by inflating the member from its start: 0.2-0.4 s
for a 10,000-step episode, on every request. The first request of an episode reads all its rows
once (others asking for the same episode meanwhile wait for that read); later ones are served
from memory until more recent episodes push it out (least recently used first, beyond
`max_bytes` of JPEG data in all). An entry is keyed by the episode and its member's CRC and
size, so a file stored again under the same name is read again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

from platform_recorder.reading.episode_files import FRAMES, EpisodeFile

DEFAULT_MAX_BYTES = 256 * 1024 * 1024


class RecentFrames:
    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._rows: OrderedDict[tuple[str, int, int], tuple[list[bytes], int]] = OrderedDict()
        self._loading: dict[tuple[str, int, int], threading.Lock] = {}
        self._lock = threading.Lock()
        self.reads = 0  # how many times a `frames` member was read whole (for tests)

    def frames(self, episode_key: str, episode: EpisodeFile, indexes: Sequence[int]) -> dict[int, bytes]:
        """`episode.frames(indexes)`, from the episode's rows in memory (read first if need be)."""
        if episode.frame_count() == 0:
            return episode.frames(indexes)  # raises the reason there are none
        key = (episode_key, *episode.member_signature(FRAMES))
        return episode.frames(indexes, rows=self._rows_of(key, episode))

    def _rows_of(self, key: tuple[str, int, int], episode: EpisodeFile) -> list[bytes]:
        with self._lock:
            kept = self._rows.get(key)
            if kept is not None:
                self._rows.move_to_end(key)
                return kept[0]
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            with self._lock:
                kept = self._rows.get(key)
                if kept is not None:
                    return kept[0]
            rows = episode.frame_rows()
            size = sum(len(r) for r in rows)
            with self._lock:
                self.reads += 1
                self._loading.pop(key, None)
                if size <= self.max_bytes:
                    self._rows[key] = (rows, size)
                    self._evict()
            return rows

    def _evict(self) -> None:
        total = sum(size for _, size in self._rows.values())
        while total > self.max_bytes and len(self._rows) > 1:
            _, (_, size) = self._rows.popitem(last=False)
            total -= size
