"""The wire form of StepEventBatch: events framed apart join into a batch protobuf parses, large
events go zstd-compressed, and a batch splits back into each event's own bytes, in order."""

from __future__ import annotations

import pytest
from platform_contracts.step_batches import (
    COMPRESS_FROM,
    EntryBytes,
    EntryForm,
    NotABatchError,
    compress_event,
    entries,
    event_bytes,
    frame_event,
    frame_step_event,
    parse_batch,
    split_observation_size,
)
from simulusion.bus.v1 import events_pb2 as bus_pb


def _events(count: int, observation_bytes: int = 0) -> list[bus_pb.StepEvent]:
    events = []
    for seq in range(1, count + 1):
        event = bus_pb.StepEvent(session_id="s-1", seq=seq, episode=0, episode_step=seq - 1, time=1.5)
        event.step.result.reward = float(seq)
        event.step.result.observation.tensor.data = b"\x01" * observation_bytes  # long lengths: multi-byte varints
        events.append(event)
    return events


@pytest.mark.parametrize("observation_bytes", [0, 100, 1000])
def test_small_framed_events_are_a_batch_and_split_back_into_the_same_bytes(observation_bytes: int) -> None:
    events = _events(5, observation_bytes)
    serialized = [e.SerializeToString() for e in events]
    joined = b"".join(frame_event(data) for data in serialized)
    assert joined == bus_pb.StepEventBatch(events=events).SerializeToString()
    assert list(bus_pb.StepEventBatch.FromString(joined).events) == events
    assert list(event_bytes(joined)) == serialized
    assert [entry.compressed for entry in entries(joined)] == [False] * 5
    assert list(event_bytes(b"")) == []


def test_large_events_go_compressed_and_come_back_in_order_between_small_ones() -> None:
    small, large = _events(3), _events(3, 100_000)
    for event in large:
        event.seq += 10
    mixed = [small[0], large[0], large[1], small[1], large[2], small[2]]
    serialized = [e.SerializeToString() for e in mixed]
    joined = b"".join(frame_event(data) for data in serialized)
    assert [entry.compressed for entry in entries(joined)] == [False, True, True, False, True, False]
    assert len(joined) < 5_000  # 300 KB of observations, repetitive like an Atari screen
    assert list(event_bytes(joined)) == serialized
    assert parse_batch(joined) == mixed
    batch = bus_pb.StepEventBatch.FromString(joined)  # a valid protobuf, fields apart
    assert len(batch.events) == 3 and len(batch.zstd_events) == 3


def test_an_event_that_does_not_shrink_goes_as_it_is() -> None:
    import os

    event = _events(1)[0]
    event.step.result.observation.tensor.data = os.urandom(COMPRESS_FROM * 2)
    data = event.SerializeToString()
    assert entries(frame_event(data)) == [EntryBytes(data, False)]


def test_bytes_that_are_not_only_events_are_refused_before_any_event() -> None:
    good = frame_event(_events(1)[0].SerializeToString())
    with pytest.raises(NotABatchError, match="field tag 0x18"):
        event_bytes(good + b"\x18\x01")  # an unknown varint field after an event
    with pytest.raises(NotABatchError, match="runs past"):
        event_bytes(good[:-3])  # a cut entry
    with pytest.raises(NotABatchError, match="bad length"):
        event_bytes(b"\x0a\xff\xff")  # a length that never ends


def test_a_compressed_entry_that_does_not_decompress_is_refused() -> None:
    packed = compress_event(_events(1, 10_000)[0].SerializeToString())
    broken = b"\x12" + bytes([len(packed) - 5]) + packed[:-5] if len(packed) - 5 < 128 else None
    assert broken is not None
    with pytest.raises(NotABatchError, match="does not decompress"):
        parse_batch(broken)


def _screen_event(seq: int, info_bytes: int = 0) -> bus_pb.StepEvent:
    event = bus_pb.StepEvent(session_id="s-1", seq=seq, episode=0, episode_step=seq, time=2.5)
    tensor = event.step.result.observation.tensor
    tensor.dtype, tensor.data = "uint8", bytes(range(250)) * 384  # 96 KB, shrinks well
    tensor.shape.extend([160, 200, 3])
    event.step.result.reward = 1.0
    event.step.result.frame.encoding = "observation"
    if info_bytes:
        event.step.result.info.fields["text"].text = "x" * info_bytes
    return event


def test_an_image_observation_event_goes_split_and_joins_back_whole() -> None:
    events = [_screen_event(1), _events(2)[1], _screen_event(3)]
    originals = [bus_pb.StepEvent.FromString(e.SerializeToString()) for e in events]
    joined = b"".join(frame_step_event(e) for e in events)
    assert len(joined) < 5000  # two 100 KB screens
    found = entries(joined)
    assert [entry.form for entry in found] == [EntryForm.SPLIT, EntryForm.PLAIN, EntryForm.SPLIT]
    assert [entry.event() for entry in found] == originals
    assert list(event_bytes(joined)) == [e.SerializeToString() for e in originals]
    assert parse_batch(joined) == originals
    light, packed = found[0].split()
    assert not light.step.result.observation.tensor.data and light.step.result.reward == 1.0
    assert list(light.step.result.observation.tensor.shape) == [160, 200, 3]
    assert split_observation_size(packed) == 160 * 200 * 3
    # A generic protobuf parse sees the split events in their own field.
    generic = bus_pb.StepEventBatch.FromString(joined)
    assert [s.event.seq for s in generic.split_events] == [1, 3] and [e.seq for e in generic.events] == [2]


def test_an_event_whose_rest_is_large_too_goes_whole_and_unchanged() -> None:
    event = _screen_event(1, info_bytes=COMPRESS_FROM)
    original = event.SerializeToString()
    framed = frame_step_event(event)
    assert event.SerializeToString() == original  # not spent: its data went back
    assert [entry.form for entry in entries(framed)] == [EntryForm.ZSTD]
    assert list(event_bytes(framed)) == [original]


def test_a_split_entry_that_does_not_parse_is_not_a_batch() -> None:
    with pytest.raises(NotABatchError, match="split event"):
        EntryBytes(b"\x0a\xff", EntryForm.SPLIT).event()
    assert split_observation_size(b"not zstd") is None
