"""The wire form of StepEventBatch: events framed apart join into a batch protobuf parses, and a
batch splits back into each event's own bytes."""

from __future__ import annotations

import pytest
from platform_contracts.step_batches import NotABatchError, event_bytes, frame_event
from simulusion.bus.v1 import events_pb2 as bus_pb


def _events(count: int, observation_bytes: int = 0) -> list[bus_pb.StepEvent]:
    events = []
    for seq in range(1, count + 1):
        event = bus_pb.StepEvent(session_id="s-1", seq=seq, episode=0, episode_step=seq - 1, time=1.5)
        event.step.result.reward = float(seq)
        event.step.result.observation.tensor.data = b"\x01" * observation_bytes  # long lengths: multi-byte varints
        events.append(event)
    return events


@pytest.mark.parametrize("observation_bytes", [0, 100, 20_000])
def test_framed_events_are_a_batch_and_split_back_into_the_same_bytes(observation_bytes: int) -> None:
    events = _events(5, observation_bytes)
    serialized = [e.SerializeToString() for e in events]
    joined = b"".join(frame_event(data) for data in serialized)
    assert joined == bus_pb.StepEventBatch(events=events).SerializeToString()
    assert list(bus_pb.StepEventBatch.FromString(joined).events) == events
    assert list(event_bytes(joined)) == serialized
    assert list(event_bytes(b"")) == []


def test_bytes_that_are_not_only_events_are_refused_before_any_event() -> None:
    good = frame_event(_events(1)[0].SerializeToString())
    with pytest.raises(NotABatchError, match="field tag 0x10"):
        event_bytes(good + b"\x10\x01")  # an unknown varint field after an event
    with pytest.raises(NotABatchError, match="runs past"):
        event_bytes(good[:-3])  # a cut entry
    with pytest.raises(NotABatchError, match="bad length"):
        event_bytes(b"\x0a\xff\xff")  # a length that never ends
