"""An endless run's episode files: cut every `FILE_STEPS` steps, restarts in place inside them.

An endless session (its spec's `endless`) may never end an episode, so its recording would be one
ever-growing part file. Its events are routed to files of `FILE_STEPS` steps instead: a file's
events fill it until it holds `FILE_STEPS` steps; the next step begins a new file (its meta entry
`continued` when it begins in the middle of an env-host episode).

An environment that still ends (a fall, a game over) restarts in place: the env host publishes
that step as the environment ended it (final observation and info, terminated or truncated),
then a reset event of the next env-host episode (`platform_envhost.step_events`). Such a reset
(one that right follows an ended step of the current file) is a restart and stays in the file
of its step, even a full one: the file's rows go on across it (`episodes.build_episode` marks
the step `restarted`). Any other reset, and a restore, begins a new file.

File indexes count files (not the env host's episode numbers, which each file's entry keeps as
`episode`, its first, and `restarts`). The routing needs only the open files and the indexes
used before, so a restarted recorder (which rebuilds both from the part files and the storage)
routes the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

from platform_recorder.writing.open_episodes import OpenEpisode

FILE_STEPS = 1000


def is_full(state: OpenEpisode) -> bool:
    """The file holds `FILE_STEPS` steps and waits for no restart's reset: it is finished, the
    run goes on in a new file."""
    return state.steps >= FILE_STEPS and not state.restart_pending


def is_restart(episode: int, state: OpenEpisode) -> bool:
    """A reset of env-host episode `episode` is the restart in place of the file's last step."""
    return state.restart_pending and episode == state.episode + 1


def route_endless(
    episode: int, kind: str | None, late: bool, open_files: dict[int, OpenEpisode], used: Iterable[int]
) -> int | None:
    """The file index of a new event of env-host episode `episode`; None: a late event whose
    episode has no open file any more.

    Args:
        kind: the event's kind (`reset`, `restore`, `step`).
        late: its seq was missing (it arrives after later ones).
        open_files: the open files by index.
        used: every index used before (finished, stored or failed files).
    """
    if late:
        same = [i for i, state in open_files.items() if state.first_episode <= episode <= state.episode]
        if not same and kind == "reset":  # a restart's reset whose step came first
            same = [i for i, state in open_files.items() if state.episode == episode - 1]
        return max(same) if same else None
    fresh = max([*open_files, *used], default=-1) + 1
    if not open_files:
        return fresh
    current = max(open_files)
    state = open_files[current]
    if kind == "reset" and is_restart(episode, state):
        return current
    if kind != "step" or state.episode != episode or is_full(state):
        return fresh
    return current
