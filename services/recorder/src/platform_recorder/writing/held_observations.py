"""Large observations of recorded events, left in the events' records until their rows are read.

An event whose observation is a large, well-formed tensor (an image) is kept light: it keeps the
tensor's dtype and shape but not its data, and the data is parsed again from the event's record
(zstd or plain, as stored) when its row is read, one row at a time (`HeldObservations.data`),
while the episode file is encoded. An event the env host sent split (`split_events`: the event
without the data, and the data as a zstd frame) comes light already: it is held as it came, and
its row is the frame decompressed, with no event to parse (`light_split_event`). Open episodes
keep their events light (`OpenEpisode.keep`), and a part file is read back light
(`read_part(held=...)`), so a Pong episode (~800 events of 100 KB) is never held whole in
memory: parsing it whole took ~80 MB, and the page faults and cache misses slowed every process
on the machine.
"""

from __future__ import annotations

import math

import numpy as np
from platform_contracts.step_batches import (
    EntryBytes,
    EntryForm,
    decompress_event,
    observation_of,
    split_observation_size,
)
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import values_pb2

# Observations of at least this many bytes are held in their records (image observations).
HOLD_FROM_BYTES = 4096


def _well_formed_size(tensor: values_pb2.Tensor) -> int | None:
    """The data size a tensor's dtype and shape call for, None when the dtype is unknown."""
    try:
        itemsize = np.dtype(tensor.dtype).itemsize
    except TypeError:
        return None
    return itemsize * math.prod(tensor.shape)


def light_split_event(entry: EntryBytes) -> tuple[events_pb2.StepEvent, int]:
    """A SPLIT entry's event and about its whole serialized size: light (its observation's data
    left in the entry) when the data's zstd frame says the size the tensor's dtype and shape call
    for, else whole (decompressed into it: the episode builder reports a malformed tensor).

    Raises:
        NotABatchError: an entry that does not parse (or, made whole, does not decompress).
    """
    event, packed = entry.split()
    expected = _split_size(event, packed)
    if expected is None:
        whole = entry.event()
        return whole, whole.ByteSize()
    return event, event.ByteSize() + expected


def _split_size(event: events_pb2.StepEvent, packed: bytes) -> int | None:
    """The size of a split event's observation data when it can be held: the event's observation
    is a tensor without data whose dtype and shape call for `HOLD_FROM_BYTES` or more, and the
    data's zstd frame (`packed`) says that size; else None."""
    value = observation_of(event)
    if value is None or value.WhichOneof("kind") != "tensor" or value.tensor.data:
        return None
    expected = _well_formed_size(value.tensor)
    if expected is None or expected < HOLD_FROM_BYTES or split_observation_size(packed) != expected:
        return None
    return expected


class HeldObservations:
    """The records of the events whose observation data was left out of them, by seq."""

    def __init__(self) -> None:
        self._records: dict[int, tuple[bytes, EntryForm]] = {}

    def __contains__(self, seq: object) -> bool:
        return seq in self._records

    def __len__(self) -> int:
        return len(self._records)

    def lighten(self, event: events_pb2.StepEvent, record: bytes, form: EntryForm,
                size: int) -> tuple[events_pb2.StepEvent, bool]:
        """`event` (parsed from `record`, held `form`, `size` bytes serialized) without its
        observation's data when that is a large, well-formed tensor, and whether it is held here
        (else `event` itself, whole). A SPLIT record's event comes light already
        (`light_split_event`): it is held as it is."""
        if form == EntryForm.SPLIT:
            if _split_size(event, EntryBytes(record, form).split()[1]) is None:
                return event, False  # made whole by light_split_event: kept so
            self._records[event.seq] = (record, form)
            return event, True
        if size < HOLD_FROM_BYTES:
            return event, False
        value = observation_of(event)
        if value is None or value.WhichOneof("kind") != "tensor":
            return event, False
        tensor = value.tensor
        expected = _well_formed_size(tensor)
        if expected is None or expected < HOLD_FROM_BYTES or len(tensor.data) != expected:
            return event, False  # small or malformed: kept whole (the episode builder reports it)
        tensor.ClearField("data")
        light = events_pb2.StepEvent()
        light.CopyFrom(event)  # a fresh message: the parsed one's memory goes with it
        self._records[event.seq] = (record, form)
        return light, True

    def data(self, seq: int) -> bytes:
        """The observation data of the held event `seq`, from its record (a split one's zstd
        frame decompressed, or the event parsed again)."""
        record, form = self._records[seq]
        if form == EntryForm.SPLIT:
            return decompress_event(EntryBytes(record, form).split()[1])
        return self.value(seq).tensor.data

    def value(self, seq: int) -> values_pb2.Value:
        """The whole observation of the held event `seq`, from its record."""
        record, form = self._records[seq]
        event = EntryBytes(record, form).event()
        value = observation_of(event)
        assert value is not None  # it was a tensor observation when it was held
        return value
