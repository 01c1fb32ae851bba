"""The state of a recording's open episodes, and what a recovery finds in its part files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from platform_contracts.frames import OBSERVATION
from platform_contracts.painted_frames import is_painted
from platform_contracts.step_batches import EntryForm
from simulusion.bus.v1 import events_pb2

from platform_recorder.writing.episodes import START_KINDS
from platform_recorder.writing.held_observations import HeldObservations
from platform_recorder.writing.part_files import ORPHANS_PART, PartWriter, part_files, read_part
from platform_recorder.writing.recorded_world_changes import event_world_changes

# An open episode keeps its events in memory up to this many bytes, so that finishing it needs
# no read back of its part file (larger ones are read back). An event with a large observation
# (an image) is kept light: its observation's data stays in its record (`held_observations`),
# and it counts as the light event's size plus its record's (a Pong step: ~0.5 KB, not 100 KB).
MAX_KEPT_BYTES = 1 << 20


@dataclass
class OpenEpisode:
    """An episode being recorded: its part file's writer and what it has seen."""

    index: int
    writer: PartWriter
    has_start: bool = False
    ended: bool = False
    episode: int = -1  # the env host's (last) episode number of its events (an endless run's files differ)
    first_episode: int = -1  # ... and its first (an endless file spans several, one per restart)
    steps: int = 0  # its step events
    frames_to_encode: int = 0  # its frames the recorder paints or encodes (`observation_frames`)
    last_seq: int = 0  # the highest seq of its events
    restart_pending: bool = False  # its last event is an ended step (endless: its restart's reset follows)
    # What its part file holds, parsed (None: too large, read it back when finishing), and the
    # observation data left out of them (`held_observations`).
    events: list[events_pb2.StepEvent] | None = field(default_factory=list)
    kept_bytes: int = 0
    held: HeldObservations = field(default_factory=HeldObservations)

    def keep(self, event: events_pb2.StepEvent, size: int, record: bytes | None = None,
             form: EntryForm = EntryForm.PLAIN) -> None:
        """Count `event` (`size` bytes serialized) and keep it, light when `record` (its bytes as
        stored, held `form`) can hold its large observation. The event must not be used for its
        observation afterwards."""
        episode, kind = int(event.episode), event.WhichOneof("kind")
        self.episode = max(self.episode, episode)
        self.first_episode = episode if self.first_episode < 0 else min(self.first_episode, episode)
        if kind == "step":
            self.steps += 1
        frame = event.step.result.frame if kind == "step" else event.reset.frame if kind == "reset" else None
        if frame is not None and (frame.encoding == OBSERVATION or is_painted(frame)):
            self.frames_to_encode += 1
        if event.seq > self.last_seq:
            self.last_seq = int(event.seq)
            self.restart_pending = kind == "step" and _ended(event)
        if self.events is None:
            return
        if record is not None:
            event, held = self.held.lighten(event, record, form, size)
            if held:
                size = event.ByteSize() + len(record)
        self.kept_bytes += size
        if self.kept_bytes <= MAX_KEPT_BYTES:
            self.events.append(event)
        else:
            self.events = None
            self.held = HeldObservations()


def _ended(event: events_pb2.StepEvent) -> bool:
    return event.step.result.terminated or event.step.result.truncated


@dataclass
class PartScan:
    """What the part files of a recording folder hold (see `scan_parts`)."""

    found: set[int] = field(default_factory=set)  # every seq in a part file
    world_changes: list[dict[str, Any]] = field(default_factory=list)  # the changes their events carry
    open: dict[int, OpenEpisode] = field(default_factory=dict)
    to_finish: set[int] = field(default_factory=set)


def scan_parts(session_dir: Path, finished: set[int], stored: set[int], endless: bool = False) -> PartScan:
    """Read (and repair: torn tails are cut) the part files of a recording in its local folder.

    Episodes whose npz is in the storage (`stored`) or that are listed in `finished`, that ended,
    or whose part is empty are to be finished; the others are open. An `endless` recording's
    files do not end with an ended step (it restarts in place: `endless_files`); the caller
    finishes the full ones.
    """
    scan = PartScan()
    for index, path in part_files(session_dir).items():
        held = HeldObservations()
        events = read_part(path, repair=True, held=held)
        scan.found.update(e.seq for e in events)
        for event in events:
            scan.world_changes.extend(event_world_changes(event, str(path)))
        if index in finished or index in stored or not events:
            scan.to_finish.add(index)  # an empty part: finishing removes it
            continue
        size = path.stat().st_size
        kept = size <= MAX_KEPT_BYTES
        state = OpenEpisode(index, PartWriter(path), events=events if kept else None, kept_bytes=size,
                            held=held if kept else HeldObservations())
        state.has_start = any(e.WhichOneof("kind") in START_KINDS for e in events)
        state.episode = max(int(e.episode) for e in events)
        state.first_episode = min(int(e.episode) for e in events)
        state.steps = sum(1 for e in events if e.WhichOneof("kind") == "step")
        last = max(events, key=lambda e: e.seq)
        state.last_seq = int(last.seq)
        state.restart_pending = last.WhichOneof("kind") == "step" and _ended(last)
        state.ended = not endless and any(e.WhichOneof("kind") == "step" and _ended(e) for e in events)
        scan.open[index] = state
        if state.ended:
            scan.to_finish.add(index)
    for path in [session_dir / ORPHANS_PART, *session_dir.glob("episode-*.failed.part")]:
        events = read_part(path, repair=path.name == ORPHANS_PART)
        scan.found.update(e.seq for e in events)
        for event in events:
            scan.world_changes.extend(event_world_changes(event, str(path)))
    return scan
