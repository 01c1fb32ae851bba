"""Large observations of recorded events, left in the events' records until their rows are read.

An event whose observation is a large, well-formed tensor (an image) is kept light: it keeps the
tensor's dtype and shape but not its data, and the data is parsed again from the event's record
(zstd or plain, as stored) when its row is read, one row at a time (`HeldObservations.data`),
while the episode file is encoded. Open episodes keep their events light (`OpenEpisode.keep`),
and a part file is read back light (`read_part(held=...)`), so a Pong episode (~800 events of
100 KB) is never held whole in memory: parsing it whole took ~80 MB, and the page faults and
cache misses slowed every process on the machine.
"""

from __future__ import annotations

import math

import numpy as np
from platform_contracts.step_batches import decompress_event
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import values_pb2

# Observations of at least this many bytes are held in their records (image observations).
HOLD_FROM_BYTES = 4096


def observation_of(event: events_pb2.StepEvent) -> values_pb2.Value | None:
    """The observation an event records (a reset's, a restore's or a step's), None for none."""
    kind = event.WhichOneof("kind")
    if kind == "step":
        return event.step.result.observation
    if kind == "reset":
        return event.reset.observation
    if kind == "restore":
        return event.restore.observation
    return None


def _well_formed_size(tensor: values_pb2.Tensor) -> int | None:
    """The data size a tensor's dtype and shape call for, None when the dtype is unknown."""
    try:
        itemsize = np.dtype(tensor.dtype).itemsize
    except TypeError:
        return None
    return itemsize * math.prod(tensor.shape)


class HeldObservations:
    """The records of the events whose observation data was left out of them, by seq."""

    def __init__(self) -> None:
        self._records: dict[int, tuple[bytes, bool]] = {}

    def __contains__(self, seq: object) -> bool:
        return seq in self._records

    def __len__(self) -> int:
        return len(self._records)

    def lighten(self, event: events_pb2.StepEvent, record: bytes, compressed: bool,
                size: int) -> events_pb2.StepEvent:
        """`event` (parsed from `record`, `size` bytes serialized) without its observation's data
        when that is a large, well-formed tensor (held here), else `event` itself."""
        if size < HOLD_FROM_BYTES:
            return event
        value = observation_of(event)
        if value is None or value.WhichOneof("kind") != "tensor":
            return event
        tensor = value.tensor
        expected = _well_formed_size(tensor)
        if expected is None or expected < HOLD_FROM_BYTES or len(tensor.data) != expected:
            return event  # small or malformed: kept whole (the episode builder reports it)
        tensor.ClearField("data")
        light = events_pb2.StepEvent()
        light.CopyFrom(event)  # a fresh message: the parsed one's memory goes with it
        self._records[event.seq] = (record, compressed)
        return light

    def data(self, seq: int) -> bytes:
        """The observation data of the held event `seq`, parsed again from its record."""
        return self.value(seq).tensor.data

    def value(self, seq: int) -> values_pb2.Value:
        """The whole observation of the held event `seq`, parsed again from its record."""
        record, compressed = self._records[seq]
        event = events_pb2.StepEvent.FromString(decompress_event(record) if compressed else record)
        value = observation_of(event)
        assert value is not None  # it was a tensor observation when it was held
        return value
