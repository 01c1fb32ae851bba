"""Errors of the recording readers."""

from __future__ import annotations

from platform_sdk.errors import PlatformError

LIFE_READER = "platform_sdk.recordings.LifeReader"


class ThinnedRecordingError(PlatformError, ValueError):
    """A recording whose frames were thinned (a life's `--frame-every`/`--max-frames`): its frame
    rows do not match its step rows, so `EpisodeFolder` does not read it; the life reader does."""


def thinned_message(where: str, why: str) -> str:
    return (
        f"{where} keeps thinned frames ({why}): EpisodeFolder reads recordings with a frame for every "
        f"step; read this one with {LIFE_READER} (it maps each frame to its step through frame_steps)"
    )


class RecordingNotFoundError(PlatformError, LookupError):
    """No such recording, or no such finished episode in it (status 404)."""


class PlayBackError(PlatformError, ValueError):
    """An episode that cannot be played back (it did not begin with a reset the recording keeps,
    its arrays could not be built, or its environment cannot be made again); the message says which."""
