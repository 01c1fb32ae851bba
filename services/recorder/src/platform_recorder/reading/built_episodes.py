"""An episode's arrays built in memory, read as an episode file is (`episode_files.EpisodeFile`).

The open episode of a recording in progress has no `.npz` yet: its arrays are built from its part
file (`open_parts`) and served through `BuiltEpisode`, which answers the same questions as an
`EpisodeFile`: array names, dtypes and shapes, arrays, rows, frames.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np
from platform_recorder.errors import RecordingNotFoundError
from platform_recorder.reading.episode_files import FRAMES, ArrayRows, select_frames
from platform_recorder.writing.npz_files import RowBytes


class BuiltEpisode:
    """The arrays of an episode (`writing.episodes.build_episode`'s), in memory."""

    def __init__(self, arrays: Mapping[str, np.ndarray | RowBytes], where: str) -> None:
        self._arrays = dict(arrays)
        self.where = where  # "recording 'x' episode 3 (in progress)", for messages

    @property
    def array_names(self) -> list[str]:
        return list(self._arrays)

    def _column(self, name: str) -> np.ndarray | RowBytes:
        if name not in self._arrays:
            raise RecordingNotFoundError(f"{self.where} has no array {name!r}; it has {self.array_names}")
        return self._arrays[name]

    def array_info(self, name: str) -> tuple[str, list[int]]:
        """(dtype string, shape), without joining a column of image rows."""
        column = self._column(name)
        return np.dtype(column.dtype).str, [int(n) for n in column.shape]

    def array(self, name: str) -> np.ndarray:
        return np.asarray(self._column(name))

    @contextmanager
    def rows(self, name: str) -> Iterator[ArrayRows]:
        yield ArrayRows.of_array(self.array(name))

    def frame_count(self) -> int:
        """The number of rows of the JPEG `frames` array (0 when the episode has none)."""
        if FRAMES not in self._arrays:
            return 0
        shape = self._arrays[FRAMES].shape
        return int(shape[0]) if shape else 0

    def frames(self, indexes: Sequence[int]) -> dict[int, bytes]:
        """JPEG bytes of the frames at `indexes` (see `EpisodeFile.frames`)."""
        count = self.frame_count()
        return select_frames(self.where, self.array(FRAMES) if count else [], count, indexes)
