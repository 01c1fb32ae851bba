"""A long recording's episode entries in sealed list files, so that meta.json stays small.

meta.json lists every finished episode; rewritten whole about every second while a session
records, it grew with the recording (a vector sub-environment's, after a minute of CartPole: 214
KB, rewritten each second for each of 64 sub-environments). So once `LIST_SIZE` entries have
gathered, the first `LIST_SIZE` go into `episodes-000000.json` (a JSON array of the entries, as
meta.json would hold them), the next into `episodes-000001.json`, and so on: each written once,
durably, before the meta.json that names it in `episode_lists`; meta.json's `episodes` holds
the entries after them (fewer than `LIST_SIZE`). The whole list, in order, is the lists' entries
then meta.json's. A recording that never had `LIST_SIZE` episodes has no list file, and a
meta.json without `episode_lists` (every recording written before them) holds them all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from platform_recorder.errors import InvalidMetaError
from platform_recorder.layout import episode_list_name, is_episode_list_name
from platform_recorder.meta import RecordingMeta, encode_json
from platform_recorder.storage.interface import ObjectNotFoundError, Storage

LIST_SIZE = 256
EPISODE_LISTS = "episode_lists"  # meta.json's member naming the sealed lists, in order


class EpisodeLists:
    """The sealed lists of one recording, by the indexes of their first and last entries.

    Args:
        bounds: those of the lists already written (`read_meta`).
    """

    def __init__(self, bounds: Sequence[tuple[int, int]] = ()) -> None:
        self.bounds: list[tuple[int, int]] = list(bounds)

    def seal(self, episodes: Sequence[dict[str, Any]], put: Callable[[str, bytes], None]) -> None:
        """Write (`put(name, data)`) the lists `episodes` fills that are not written yet, or whose
        entries changed (an episode finished out of order, after a crash, and was put in its
        place: rare)."""
        for number in range(len(episodes) // LIST_SIZE):
            chunk = episodes[number * LIST_SIZE : (number + 1) * LIST_SIZE]
            bound = (int(chunk[0]["index"]), int(chunk[-1]["index"]))
            if number < len(self.bounds) and self.bounds[number] == bound:
                continue
            put(episode_list_name(number), encode_json(list(chunk)))
            if number < len(self.bounds):
                self.bounds[number] = bound
            else:
                self.bounds.append(bound)

    def file_body(self, meta: RecordingMeta) -> dict[str, Any]:
        """meta.json's members: the entries after the sealed lists, and the lists' names."""
        body = meta.to_json()
        sealed = len(self.bounds)
        if sealed:
            body = dict(body)
            body["episodes"] = meta.episodes[sealed * LIST_SIZE :]
            body[EPISODE_LISTS] = [episode_list_name(number) for number in range(sealed)]
        return body


def read_meta(storage: Storage, recording_id: str, data: bytes) -> tuple[RecordingMeta, EpisodeLists]:
    """The meta of a meta.json's bytes with every episode entry (its lists' too), and its lists.

    Raises:
        InvalidMetaError: not a recording's meta.json, or one naming a list that is not there
            or not a list of entries.
        ValueError: not JSON.
    """
    body = json.loads(data)
    bounds: list[tuple[int, int]] = []
    if isinstance(body, dict) and body.get(EPISODE_LISTS) is not None:
        names = body.pop(EPISODE_LISTS)
        if not isinstance(names, list) or not all(isinstance(n, str) and is_episode_list_name(n) for n in names):
            raise InvalidMetaError(f"meta.json's {EPISODE_LISTS} is not a list of episodes-NNNNNN.json names")
        entries: list[Any] = []
        for name in names:
            try:
                chunk = json.loads(storage.get(f"{recording_id}/{name}"))
            except ObjectNotFoundError:
                raise InvalidMetaError(f"meta.json names the episode list {name}, which is missing") from None
            if not isinstance(chunk, list) or not chunk or not all(isinstance(e, dict) for e in chunk):
                raise InvalidMetaError(f"the episode list {name} is not a list of episode entries")
            entries.extend(chunk)
            bounds.append((int(chunk[0].get("index", -1)), int(chunk[-1].get("index", -1))))
        body["episodes"] = entries + list(body.get("episodes") or [])
    return RecordingMeta.from_json(body), EpisodeLists(bounds)
