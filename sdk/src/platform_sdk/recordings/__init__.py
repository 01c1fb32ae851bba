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

A recorded episode is played again in a new session of its environment with `play_back`, which
compares each step's reward and observation with the recording (from a platform, by id):

    from platform_sdk.recordings import play_back

    result = play_back("s-1a2b3c4d5e6f", 0)     # url=..., token=... as for connect
    result.matches, result.first_divergent_step  # True, None for a deterministic environment
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from platform_sdk.recordings.episode import Episode
from platform_sdk.recordings.errors import PlayBackError, RecordingNotFoundError, ThinnedRecordingError
from platform_sdk.recordings.folder import EpisodeFolder
from platform_sdk.recordings.life import LifeEpisode, LifeReader, LifeSession

__all__ = ["Episode", "EpisodeFolder", "LifeEpisode", "LifeReader", "LifeSession", "PlayBack", "PlayBackError",
           "PlayedStep", "RecordingNotFoundError", "ThinnedRecordingError", "play_back"]

if TYPE_CHECKING:
    from platform_sdk.recordings.episode_play_back import PlayBack, PlayedStep, play_back

_PLAY_BACK = frozenset({"PlayBack", "PlayedStep", "play_back"})


def __getattr__(name: str) -> Any:
    """The play back names, imported on first use (they need the client: Gymnasium, httpx),
    so reading recording files stays light."""
    if name in _PLAY_BACK:
        from platform_sdk.recordings import episode_play_back

        return getattr(episode_play_back, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
