"""`LifeReader`: a life (one agent's recordings across sessions and restarts) read in order.

A life `robot-1` is an index `<recordings>/lives/robot-1.json` naming its sessions in order, each
with the life step it begins at; each session is an ordinary recording folder
`<recordings>/<session_id>/` whose episodes carry `life_start` (docs/recording-format.md, "Lives").
With `--frame-every`/`--max-frames` the files keep only some frames, and `frame_steps` says the
life step of each; `LifeReader` reads those (`EpisodeFolder` does not).

    from platform_sdk.recordings import LifeReader

    life = LifeReader("recordings", "robot-1")
    for episode in life.episodes():           # every finished episode of every session, in order
        print(episode.session_id, episode.life_start, episode["rewards"].sum())
    for step, frame in life.frames():         # (life step, RGB uint8 (H, W, 3)) across the life
        ...
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from platform_sdk.errors import PlatformWarning
from platform_sdk.recordings.episode import FRAME_STEPS, FRAMES, FRAMES_RGB, Episode
from platform_sdk.recordings.folder import META_FILE, EpisodeFolder

LIVES_DIR = "lives"
LIFE_START = "life_start"
_STARTS = ("reset", "restore")  # an episode file that begins with one has a row before its first step


class LifeEpisode(Episode):
    """An episode of a life: an `Episode` (arrays loaded on first use) that knows its life steps.

    Attributes:
        session_id: the session that recorded it.
    """

    reads_thinned = True

    def __init__(self, path: str | Path, entry: dict[str, Any], session_id: str) -> None:
        super().__init__(path, entry)
        self.session_id = session_id

    @property
    def life_start(self) -> int:
        """The life step before its first step: its first observation row's step after a reset or
        restore (row k at `life_start + k`); a file that begins with a step (an endless run's next
        file, `continued`) has its row k at `life_start + k + 1`."""
        if LIFE_START in self.entry:
            return int(self.entry[LIFE_START])
        return int(self[LIFE_START])

    @property
    def continued(self) -> bool:
        """It goes on with the episode of the file before it (an endless run cut every 1,000 steps)."""
        return bool(self.entry.get("continued"))

    def row_steps(self) -> np.ndarray:
        """The life step of each observation row (int64)."""
        rows = _rows(self, "observations")
        first = self.life_start + (0 if self.entry.get("start", "reset") in _STARTS else 1)
        return np.arange(first, first + rows, dtype=np.int64)

    @property
    def frame_steps(self) -> np.ndarray:
        """The life step of each stored frame row (int64): `frame_steps` of a thinned file, else the
        steps of the observation rows."""
        if FRAME_STEPS in self.names:
            return self[FRAME_STEPS]
        return self.row_steps()[: self.frame_count] if self.frame_count else np.zeros(0, dtype=np.int64)

    def life_frames(self) -> Iterator[tuple[int, np.ndarray]]:
        """(life step, RGB frame) of each stored frame, in order (rows without a frame skipped)."""
        steps = self.frame_steps
        for i, step in enumerate(steps.tolist()):
            try:
                yield int(step), self.frames(i)
            except ValueError:  # a row recorded without a frame
                continue

    def __repr__(self) -> str:
        return (f"LifeEpisode({str(self.path)!r}, session_id={self.session_id!r}, index={self.index}, "
                f"life_start={self.entry.get(LIFE_START)}, length={self.entry.get('length')})")


def _rows(episode: Episode, prefix: str) -> int:
    """Rows of the first array named `prefix` or `prefix.<...>` (a Dict space's observations)."""
    name = next((n for n in episode.names if n == prefix or n.startswith(prefix + ".")), None)
    return 0 if name is None else len(episode[name])


class LifeSession(EpisodeFolder):
    """One session's recording of a life: an `EpisodeFolder` whose thinned files it reads, giving
    `LifeEpisode`s."""

    def _check_frames(self) -> None:
        return None  # thinned frames are read with their frame_steps

    def _episode(self, path: Path, entry: dict[str, Any]) -> LifeEpisode:
        return LifeEpisode(path, entry, str(self.meta.get("session_id", self.path.name)))

    def __getitem__(self, i: int) -> LifeEpisode:
        episode = super().__getitem__(i)
        assert isinstance(episode, LifeEpisode)
        return episode

    def __iter__(self) -> Iterator[LifeEpisode]:
        for i in range(len(self)):
            yield self[i]


class LifeReader:
    """A life's sessions and episodes, in the life's order.

    Args:
        recordings: the recordings folder (`PLATFORM_RECORDINGS`, e.g. `./recordings`, or a copy of
            it), the one holding `lives/<name>.json` and the sessions' folders.
        name: the life's name, e.g. `robot-1`.

    Raises:
        FileNotFoundError: the folder holds no index of that life (the message names the lives it has).

    Attributes:
        root: the recordings folder.
        name: the life.
        index: `lives/<name>.json` as a dict.
        notes: what is left out and why (sessions whose recording is not in the folder); also given
            as one `PlatformWarning`.
    """

    def __init__(self, recordings: str | Path, name: str) -> None:
        if str(recordings).startswith("s3://"):
            raise FileNotFoundError(
                f"{recordings} is an S3 location: LifeReader reads a folder; copy the recordings first "
                f"(e.g. `mc mirror`), with {LIVES_DIR}/{name}.json and the sessions' folders"
            )
        self.root = Path(recordings)
        self.name = name
        path = self.root / LIVES_DIR / f"{name}.json"
        if not path.is_file():
            known = sorted(p.stem for p in (self.root / LIVES_DIR).glob("*.json"))
            has = f"it has {', '.join(known)}" if known else "it has none"
            raise FileNotFoundError(f"no life {name!r} in {self.root} (no {path}); {has}")
        self.index: dict[str, Any] = json.loads(path.read_text())
        self.notes = [
            f"session {s['session_id']} of the life has no recording folder here ({self.root / s['session_id']})"
            for s in self.sessions
            if not (self.root / str(s["session_id"]) / META_FILE).is_file()
        ]
        if self.notes:
            warnings.warn(f"life {name}: " + "; ".join(self.notes), PlatformWarning, stacklevel=2)

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """The index's sessions in order: `{session_id, first_step, steps, status}`."""
        return [dict(s) for s in self.index.get("sessions", [])]

    @property
    def total_steps(self) -> int:
        return int(self.index.get("total_steps") or 0)

    @property
    def frame_every(self) -> int:
        return int(self.index.get("frame_every") or 0)

    @property
    def max_frames(self) -> int:
        return int(self.index.get("max_frames") or 0)

    def session(self, session_id: str) -> LifeSession:
        """One session's recording (its folder), by id.

        Raises:
            KeyError: the session is not in the life.
            FileNotFoundError: its folder is not there.
        """
        if session_id not in {str(s["session_id"]) for s in self.sessions}:
            raise KeyError(f"session {session_id!r} is not in life {self.name!r}")
        return LifeSession(self.root / session_id)

    def folders(self) -> Iterator[LifeSession]:
        """The sessions' recordings in the life's order (those not in the folder skipped: `notes`)."""
        for entry in self.sessions:
            session_id = str(entry["session_id"])
            if (self.root / session_id / META_FILE).is_file():
                yield LifeSession(self.root / session_id)

    def episodes(self) -> Iterator[LifeEpisode]:
        """Every finished episode of the life, in order (its sessions in order, their episodes by
        index); open episodes are skipped until the recorder finishes them."""
        for folder in self.folders():
            yield from folder

    def frames(self) -> Iterator[tuple[int, np.ndarray]]:
        """(life step, RGB uint8 (H, W, 3)) of every kept frame across the life, in order. At an
        episode boundary the ending step's frame and the next reset's share a life step: a life
        without thinning gives both, a thinned one keeps at most one frame per step."""
        for episode in self.episodes():
            if FRAMES in episode.names or FRAMES_RGB in episode.names:
                yield from episode.life_frames()

    def __repr__(self) -> str:
        return (f"LifeReader({str(self.root)!r}, {self.name!r}, sessions={len(self.sessions)}, "
                f"total_steps={self.total_steps})")
