"""The state of a recording's open episodes, and what a recovery finds in its part files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from simulusion.bus.v1 import events_pb2

from platform_recorder.episodes import START_KINDS
from platform_recorder.session_files import ORPHANS_PART, PartWriter, part_files, read_part

# An open episode keeps its parsed events in memory up to this many serialized bytes, so that
# finishing it needs no read back of its part file (larger ones are read back).
MAX_KEPT_BYTES = 1 << 20


@dataclass
class OpenEpisode:
    """An episode being recorded: its part file's writer and what it has seen."""

    index: int
    writer: PartWriter
    has_start: bool = False
    ended: bool = False
    episode: int = -1  # the env host's episode number of its events (an endless run's files differ)
    steps: int = 0  # its step events
    # What its part file holds, parsed (None: too large, read it back when finishing).
    events: list[events_pb2.StepEvent] | None = field(default_factory=list)
    kept_bytes: int = 0

    def keep(self, event: events_pb2.StepEvent, size: int) -> None:
        self.episode = int(event.episode)
        if event.WhichOneof("kind") == "step":
            self.steps += 1
        if self.events is not None:
            self.kept_bytes += size
            if self.kept_bytes <= MAX_KEPT_BYTES:
                self.events.append(event)
            else:
                self.events = None


@dataclass
class PartScan:
    """What the part files of a recording folder hold (see `scan_parts`)."""

    found: set[int] = field(default_factory=set)  # every seq in a part file
    open: dict[int, OpenEpisode] = field(default_factory=dict)
    to_finish: set[int] = field(default_factory=set)


def scan_parts(session_dir: Path, finished: set[int], stored: set[int]) -> PartScan:
    """Read (and repair: torn tails are cut) the part files of a recording in its local folder.

    Episodes whose npz is in the storage (`stored`) or that are listed in `finished`, that ended,
    or whose part is empty are to be finished; the others are open.
    """
    scan = PartScan()
    for index, path in part_files(session_dir).items():
        events = read_part(path, repair=True)
        scan.found.update(e.seq for e in events)
        if index in finished or index in stored or not events:
            scan.to_finish.add(index)  # an empty part: finishing removes it
            continue
        size = path.stat().st_size
        state = OpenEpisode(index, PartWriter(path), events=events if size <= MAX_KEPT_BYTES else None,
                            kept_bytes=size)
        state.has_start = any(e.WhichOneof("kind") in START_KINDS for e in events)
        state.episode = int(events[-1].episode)
        state.steps = sum(1 for e in events if e.WhichOneof("kind") == "step")
        state.ended = any(
            e.WhichOneof("kind") == "step" and (e.step.result.terminated or e.step.result.truncated)
            for e in events
        )
        scan.open[index] = state
        if state.ended:
            scan.to_finish.add(index)
    for path in [session_dir / ORPHANS_PART, *session_dir.glob("episode-*.failed.part")]:
        scan.found.update(e.seq for e in read_part(path, repair=path.name == ORPHANS_PART))
    return scan
