"""An endless run's episode files: cut every `FILE_STEPS` steps.

An endless session (its spec's `endless`) may never end an episode, so its recording would be one
ever-growing part file. Its events are routed to files instead: an episode's events fill a file
until it holds `FILE_STEPS` steps; the episode's next step begins a new file (its meta entry
`continued`: it begins in the middle of an episode). A reset or restore always begins a new file.
File indexes count files (not the env host's episode numbers, which each file's entry keeps as
`episode`). The routing needs only the open files and the indexes used before, so a restarted
recorder (which rebuilds both from the part files and the storage) routes the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

from platform_recorder.writing.open_episodes import OpenEpisode

FILE_STEPS = 1000


def is_full(state: OpenEpisode) -> bool:
    """The file holds `FILE_STEPS` steps: it is finished, its episode goes on in a new file."""
    return state.steps >= FILE_STEPS


def route_endless(
    episode: int, kind: str | None, late: bool, open_files: dict[int, OpenEpisode], used: Iterable[int]
) -> int | None:
    """The file index of a new event of episode `episode`; None: a late event whose episode has no
    open file any more.

    Args:
        kind: the event's kind (`reset`, `restore`, `step`).
        late: its seq was missing (it arrives after later ones).
        open_files: the open files by index.
        used: every index used before (finished, stored or failed files).
    """
    if late:
        same = [i for i, state in open_files.items() if state.episode == episode]
        return max(same) if same else None
    fresh = max([*open_files, *used], default=-1) + 1
    if kind != "step" or not open_files:
        return fresh
    current = max(open_files)
    state = open_files[current]
    if state.episode != episode or (is_full(state) and not state.ended):
        return fresh
    return current
