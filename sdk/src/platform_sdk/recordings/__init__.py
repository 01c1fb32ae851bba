"""Reading recordings with plain NumPy: `EpisodeFolder(path)` gives a recording's finished
episodes one by one, each an `Episode` whose arrays load on first use.

    from platform_sdk.recordings import EpisodeFolder

    folder = EpisodeFolder("recordings/s-1a2b3c")
    for episode in folder:
        rewards = episode["rewards"]            # float64 (T,)
        first = episode.frames(0)               # RGB uint8 (H, W, 3), with record_frames

The files themselves need no platform: each episode is a NumPy `.npz` (docs/recording-format.md).
A life (a named recording across sessions, `--life robot-1`) is read with `LifeReader`, which
also reads its thinned frames (`EpisodeFolder` does not):

    from platform_sdk.recordings import LifeReader

    life = LifeReader("recordings", "robot-1")
    for episode in life.episodes():
        print(episode.session_id, episode.life_start, len(episode["rewards"]))
    for step, frame in life.frames():        # (life step, RGB uint8 (H, W, 3))
        ...
"""

from __future__ import annotations

from platform_sdk.recordings.episode import Episode
from platform_sdk.recordings.errors import ThinnedRecordingError
from platform_sdk.recordings.folder import EpisodeFolder
from platform_sdk.recordings.life import LifeEpisode, LifeReader, LifeSession

__all__ = ["Episode", "EpisodeFolder", "LifeEpisode", "LifeReader", "LifeSession", "ThinnedRecordingError"]
