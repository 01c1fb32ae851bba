"""Events with large observations are kept light: the observation data stays in the event's
record (zstd, plain, or split as the env host sends image observations: the data's zstd frame
beside the light event) and is read again row by row while the episode file is written, both
for events kept in memory (a small record each) and for an episode read back from its part file
(too large to keep). The file is the one the events parsed whole give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts import subjects
from platform_contracts.frames import OBSERVATION, jpeg_bytes
from platform_contracts.spaces import space_to_proto
from platform_contracts.step_batches import EntryForm, compress_event, entries, frame_event, frame_step_event
from platform_contracts.values import tensor_from_array
from platform_recorder.writing.episodes import build_episode
from platform_recorder.writing.held_observations import HeldObservations
from platform_recorder.writing.open_episodes import MAX_KEPT_BYTES
from platform_recorder.writing.part_files import frame_record, part_path, read_part
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import closed, episode_events, load_episode, started, subject_of
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

SIDE = 64  # 64 x 64 x 3 = 12 KB a row: ~90 rows pass MAX_KEPT_BYTES
STEPS = 120


def screen(seq: int, noisy: bool) -> np.ndarray:
    """A recognisable screen per seq: flat colours (zstd shrinks its event) or noise (it does not)."""
    if noisy:
        return np.random.default_rng(seq).integers(0, 256, (SIDE, SIDE, 3), dtype=np.uint8)
    array = np.zeros((SIDE, SIDE, 3), np.uint8)
    array[: seq % SIDE, :, 0] = 200
    array[:, : (3 * seq) % SIDE, 2] = 90
    return array


def spec() -> env_pb.SpecResponse:
    return env_pb.SpecResponse(
        env_id="screens",
        observation_space=space_to_proto(gs.Box(0, 255, (SIDE, SIDE, 3), np.uint8)),
        action_space=space_to_proto(gs.Discrete(2)),
    )


def screen_events(noisy: bool, frames: bool = True) -> list[Any]:
    events = episode_events("s1", 1, 0, STEPS, obs=lambda seq: pb.Value(tensor=tensor_from_array(screen(seq, noisy))))
    if frames:
        marker = env_pb.Frame(encoding=OBSERVATION, width=SIDE, height=SIDE, quality=80)
        for event in events:
            (event.reset if event.WhichOneof("kind") == "reset" else event.step.result).frame.CopyFrom(marker)
    return events


def split_framed(event: Any) -> bytes:
    """`event` framed as the env host frames it (split, when its observation is large), unspent."""
    copy = bus_pb.StepEvent()
    copy.CopyFrom(event)
    return frame_step_event(copy)


def zstd_framed(event: Any) -> bytes:
    return frame_event(event.SerializeToString())


def write(root: Path, events: list[Any], framed: Any = split_framed, **life: Any) -> None:
    """As the env host sends them: batches of 10 events, large ones split (or, with `framed`,
    zstd-compressed when that helps)."""
    messages = [(subject_of(e), e.SerializeToString()) for e in (started("s1", spec=spec(), **life),)]
    for i in range(0, len(events), 10):
        batch = b"".join(framed(e) for e in events[i : i + 10])
        messages.append((subjects.session_step_batches("s1"), batch))
    end = closed("s1", last_seq=len(events))
    messages.append((subject_of(end), end.SerializeToString()))
    RecordingWriter(root).process(messages)


@pytest.mark.parametrize("framed", [split_framed, zstd_framed], ids=["split", "zstd"])
@pytest.mark.parametrize("noisy", [False, True], ids=["records-kept-light", "records-read-back"])
def test_light_events_give_the_episode_file_the_whole_events_give(tmp_path: Path, noisy: bool, framed: Any) -> None:
    events = screen_events(noisy)
    # compressed records are ~0.2 KB: the light episode stays in memory; those of noise (which
    # does not shrink) are 12 KB: it is read back from its part file
    records = sum(len(framed(e)) for e in events)
    assert (records > MAX_KEPT_BYTES) == noisy
    forms = {entry.form for e in events for entry in entries(framed(e))}
    assert forms == ({EntryForm.SPLIT} if framed is split_framed else
                     {EntryForm.PLAIN} if noisy else {EntryForm.ZSTD})
    write(tmp_path, events, framed)
    arrays = load_episode(tmp_path, "s1", 0)
    assert np.array_equal(arrays["observations"], np.stack([screen(seq, noisy) for seq in range(1, STEPS + 2)]))
    assert [bytes(f) for f in arrays["frames"]] == [jpeg_bytes(screen(seq, noisy), 80) for seq in range(1, STEPS + 2)]
    whole, _ = build_episode(events, spec={})
    for name in ("actions", "rewards", "terminated", "truncated", "seq", "frames"):
        assert np.array_equal(arrays[name], whole[name]), name


def test_read_back_light_holds_only_large_well_formed_tensor_observations(tmp_path: Path) -> None:
    events = screen_events(noisy=False, frames=False)
    events[3].step.result.observation.tensor.data = b"\x00" * 10  # malformed: kept whole
    path = part_path(tmp_path, 0)
    path.write_bytes(b"".join(frame_record(e.SerializeToString()) for e in events))
    held = HeldObservations()
    light = read_part(path, held=held)
    assert [e.seq for e in light] == [e.seq for e in events]
    assert len(held) == len(events) - 1 and 4 not in held
    assert not light[1].step.result.observation.tensor.data and light[1].step.result.observation.tensor.shape == [
        SIDE, SIDE, 3]
    assert light[3].step.result.observation.tensor.data == b"\x00" * 10
    assert held.data(2) == screen(2, noisy=False).tobytes()
    # the malformed row fails the episode as it does with the events parsed whole (the recorder
    # then keeps them in a .failed.part file)
    with pytest.raises(ValueError, match="cannot reshape array of size 10"):
        build_episode(events, "s1 episode 0", {})
    with pytest.raises(ValueError, match="cannot reshape array of size 10"):
        build_episode(light, "s1 episode 0", {}, None, held)


def test_split_records_read_back_light_and_a_malformed_one_whole(tmp_path: Path) -> None:
    events = screen_events(noisy=False, frames=False)
    records = [entries(split_framed(e))[0].data for e in events]
    bad = bus_pb.SplitStepEvent.FromString(records[3])
    bad.zstd_observation = compress_event(b"\x00" * 5000)  # not the 64 x 64 x 3 its shape says
    records[3] = bad.SerializeToString()
    path = part_path(tmp_path, 0)
    path.write_bytes(b"".join(frame_record(record, EntryForm.SPLIT) for record in records))
    held = HeldObservations()
    light = read_part(path, held=held)
    assert [e.seq for e in light] == [e.seq for e in events]
    assert len(held) == len(events) - 1 and 4 not in held
    assert not light[1].step.result.observation.tensor.data
    assert light[3].step.result.observation.tensor.data == b"\x00" * 5000  # whole: the builder reports it
    assert held.data(2) == screen(2, noisy=False).tobytes()
    assert held.value(2).tensor.data == screen(2, noisy=False).tobytes()
    assert held.value(2).tensor.shape == [SIDE, SIDE, 3]
    whole = read_part(path)  # without `held`: every event whole
    assert whole[:3] == events[:3] and whole[4:] == events[4:]
    with pytest.raises(ValueError, match="cannot reshape array of size 5000"):
        build_episode(light, "s1 episode 0", {}, None, held)
    # An empty frame leaves the event whole with empty data: not held (its row would be empty).
    empty = bus_pb.SplitStepEvent.FromString(records[5])
    empty.zstd_observation = compress_event(b"")
    again = HeldObservations()
    event, held_it = again.lighten(empty.event, empty.SerializeToString(), EntryForm.SPLIT, 100)
    assert event is empty.event and not held_it and len(again) == 0


def test_a_thinned_life_reads_the_kept_frames_rows_back(tmp_path: Path) -> None:
    events = screen_events(noisy=False)
    write(tmp_path, events, life="robot-1", frame_every=7)
    arrays = load_episode(tmp_path, "s1", 0)
    kept = arrays["frame_steps"].tolist()
    assert kept == list(range(0, STEPS + 1, 7))
    assert [bytes(f) for f in arrays["frames"]] == [jpeg_bytes(screen(step + 1, False), 80) for step in kept]
