"""One finished episode of a recording (`episode-NNNNNN.npz`), its arrays loaded on first use.

Opening an `Episode` reads only the file's directory (its array names); `episode["actions"]`
decompresses that one array (then keeps it); `frame_count` reads only the `frames` array's
header. The file is opened for each read and closed again, so iterating over thousands of
episodes holds no file open.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from platform_sdk.recordings.errors import ThinnedRecordingError, thinned_message

FRAMES = "frames"  # JPEG bytes, one row per observation
FRAMES_RGB = "frames_rgb"  # raw uint8 (rows, H, W, 3)
FRAME_STEPS = "frame_steps"  # only in thinned files (lives)


def _member_shape(path: Path, name: str) -> tuple[int, ...]:
    """The shape of array `name` of an .npz, read from its .npy header (no data decompressed)."""
    with zipfile.ZipFile(path) as archive, archive.open(f"{name}.npy") as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, _ = np.lib.format.read_array_header_1_0(member)
        else:
            shape, _, _ = np.lib.format.read_array_header_2_0(member)
    return tuple(shape)


class Episode:
    """An episode's named arrays, loaded lazily: `episode["rewards"]`, `"frames" in episode`,
    `list(episode)` (the names), `dict(episode)` (every array).

    Attributes:
        path: the episode file.
        entry: its entry in meta.json (`index`, `length`, `return`, `terminated`, ...).
    """

    reads_thinned = False  # a life reader's episodes read files with `frame_steps`

    def __init__(self, path: str | Path, entry: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.entry: dict[str, Any] = dict(entry or {})
        self._names: list[str] | None = None
        self._arrays: dict[str, np.ndarray] = {}

    @property
    def index(self) -> int | None:
        """The episode's number in its session (from meta.json)."""
        index = self.entry.get("index")
        return None if index is None else int(index)

    @property
    def length(self) -> int:
        """Its number of steps (T): rows of `actions`, `rewards`...; observations have T+1."""
        if "length" in self.entry:
            return int(self.entry["length"])
        return _member_shape(self.path, "rewards")[0]

    @property
    def names(self) -> list[str]:
        """The names of its arrays, sorted (reads the file's directory once).

        Raises:
            ThinnedRecordingError: the file keeps thinned frames (`frame_steps`).
        """
        if self._names is None:
            with np.load(self.path, allow_pickle=False) as data:
                names = sorted(data.files)
            if FRAME_STEPS in names and not self.reads_thinned:
                raise ThinnedRecordingError(thinned_message(str(self.path), f"it holds {FRAME_STEPS!r}"))
            self._names = names
        return self._names

    def __getitem__(self, name: str) -> np.ndarray:
        array = self._arrays.get(name)
        if array is None:
            if name not in self.names:
                raise KeyError(f"{self.path.name} has no array {name!r}; it has {', '.join(self.names)}")
            with np.load(self.path, allow_pickle=False) as data:
                array = self._arrays[name] = data[name]
        return array

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def keys(self) -> list[str]:
        return self.names

    def load(self) -> dict[str, np.ndarray]:
        """Every array at once, as a dict."""
        return {name: self[name] for name in self.names}

    @property
    def frame_count(self) -> int:
        """How many frame rows it holds (observation rows: T+1 after a reset); 0 without frames."""
        for name in (FRAMES, FRAMES_RGB):
            if name in self.names:
                return _member_shape(self.path, name)[0]
        return 0

    def frames(self, i: int) -> np.ndarray:
        """Frame row `i` (negative counts from the end) as RGB, uint8 (height, width, 3).

        Raises:
            LookupError: the episode holds no frames (recorded without `record_frames`).
            IndexError: `i` is out of range.
            ValueError: row `i` has no frame (its step was recorded without one).
        """
        if FRAMES in self.names:
            rows = self[FRAMES]
            data = bytes(self._row(rows, i))  # fixed-width bytes: NUL padding is stripped; a JPEG ends in FF D9
            if not data:
                raise ValueError(f"{self.path.name}: row {i} has no frame")
            from platform_sdk.client.results import decode_jpeg  # simplejpeg: the `frames` extra

            return decode_jpeg(data)
        if FRAMES_RGB in self.names:
            return np.asarray(self._row(self[FRAMES_RGB], i))
        raise LookupError(f"{self.path.name} holds no frames: its session was recorded without record_frames")

    def _row(self, rows: np.ndarray, i: int) -> Any:
        if not -len(rows) <= i < len(rows):
            raise IndexError(f"{self.path.name}: frame {i} is out of range ({len(rows)} frames)")
        return rows[i]

    def __repr__(self) -> str:
        return f"Episode({str(self.path)!r}, index={self.index}, length={self.entry.get('length')})"
