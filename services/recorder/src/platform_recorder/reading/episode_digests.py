"""The observation digests of a recorded episode (`platform_contracts.digests`), one per
observation row, read row by row from its `observations` / `observations.<path>` arrays."""

from __future__ import annotations

from contextlib import ExitStack

from platform_contracts.digests import leaf_name, leaves_digest
from platform_recorder.errors import RecorderError, RecordingNotFoundError
from platform_recorder.reading.episode_files import EpisodeArrays


def observation_digests(episode: EpisodeArrays) -> list[str]:
    """The hex digest of each observation row (row 0: the reset's, row i: the i-th step's).

    Raises:
        RecordingNotFoundError: the episode has no observation arrays.
        RecorderError: its observation arrays have different row counts, or one is cut short.
    """
    paths = {name: leaf_name(name) for name in episode.array_names}
    leaves = {name: path for name, path in paths.items() if path is not None}
    if not leaves:
        raise RecordingNotFoundError(f"{episode.where} has no observation arrays ('observations', "
                                     f"'observations.<key>'); it has {episode.array_names}")
    with ExitStack() as stack:
        readers = {path: stack.enter_context(episode.rows(name)) for name, path in leaves.items()}
        counts = {reader.count for reader in readers.values()}
        if len(counts) != 1:
            rows = {name: readers[path].count for name, path in leaves.items()}
            raise RecorderError(f"{episode.where}: its observation arrays have different row counts {rows}")
        return [
            leaves_digest((path, reader.dtype, reader.row_shape, reader.next_row()) for path, reader in readers.items())
            for _ in range(counts.pop())
        ]
