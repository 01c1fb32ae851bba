"""The wire form of a `StepEventBatch` (simulusion/bus/v1/events.proto), one event at a time.

A batch's bytes are its events' bytes, each behind a field tag and its length: field 1
(`events`) for an event as it is, field 2 (`zstd_events`) for an event of `COMPRESS_FROM` bytes
or more as a zstd frame (an image observation shrinks ~500x: Pong's 100 KB frames to ~200 bytes,
in ~10 µs), and field 3 (`split_events`) for an event whose observation is a large tensor and
whose rest is small: the event without the tensor's data, and the data as a zstd frame
(`frame_step_event`). So JetStream, the recorder and its part files move a fraction of the
bytes, and the recorder takes a split event without decompressing its observation (it needs the
pixels only when it writes the episode's file: decompressing and parsing a Pong event as it
arrives cost it ~25 µs a step). The entries' order in the bytes is the events' order. So the env
host can join events serialized apart into a batch (splitting one larger than a NATS message
allows), and the recorder can take each event's own bytes out of a batch (to store them as they
came, without serializing or compressing the event again).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Iterator
from typing import NamedTuple

import zstandard
from google.protobuf.message import DecodeError
from simulusion.bus.v1 import events_pb2
from simulusion.env.v1 import values_pb2

EVENTS_TAG = 0x0A  # field 1 (`events`), length-delimited
ZSTD_EVENTS_TAG = 0x12  # field 2 (`zstd_events`), length-delimited
SPLIT_EVENTS_TAG = 0x1A  # field 3 (`split_events`), length-delimited
SPLIT_EVENT_TAG = 0x0A  # SplitStepEvent field 1 (`event`)
SPLIT_OBSERVATION_TAG = 0x12  # SplitStepEvent field 2 (`zstd_observation`)
COMPRESS_FROM = 4096  # serialized events of at least this many bytes are sent compressed
# zstd's fast mode: on Pong events (a 100 KB screen and a 3 KB JPEG) 18 µs against level 3's
# 30 µs, for the same ~1.75 KB; the env host compresses every large event of a recorded session.
ZSTD_LEVEL = -1
# A compressed event never expands to more than this (a NATS message is far smaller anyway).
MAX_EVENT_BYTES = 1 << 30

_codecs = threading.local()  # zstd (de)compressors are not to be shared between threads


class EntryForm(enum.IntEnum):
    """How an entry of a batch holds its event."""

    PLAIN = 0  # the serialized StepEvent
    ZSTD = 1  # a zstd frame of it
    SPLIT = 2  # a serialized SplitStepEvent


_TAG_FORMS = {EVENTS_TAG: EntryForm.PLAIN, ZSTD_EVENTS_TAG: EntryForm.ZSTD, SPLIT_EVENTS_TAG: EntryForm.SPLIT}


class EntryBytes(NamedTuple):
    """One event of a batch as it came: its bytes, and how they hold it."""

    data: bytes
    form: EntryForm

    @property
    def compressed(self) -> bool:
        """The bytes are a zstd frame of the serialized event."""
        return self.form == EntryForm.ZSTD

    def event_bytes(self) -> bytes:
        """The serialized StepEvent (a split one joined again)."""
        if self.form == EntryForm.ZSTD:
            return decompress_event(self.data)
        if self.form == EntryForm.SPLIT:
            return self.event().SerializeToString()
        return self.data

    def event(self) -> events_pb2.StepEvent:
        """The whole StepEvent (a split one with its observation's data again).

        Raises:
            NotABatchError: bytes that do not parse or decompress.
        """
        if self.form != EntryForm.SPLIT:
            return _parse_event(self.event_bytes())
        event, packed = self.split()
        value = observation_of(event)
        if value is None or value.WhichOneof("kind") != "tensor":
            raise NotABatchError(f"a split event (seq {event.seq}) without a tensor observation")
        value.tensor.data = decompress_event(packed)
        return event

    def split(self) -> tuple[events_pb2.StepEvent, bytes]:
        """A SPLIT entry's event without its observation's data, and that data's zstd frame.

        Raises:
            NotABatchError: bytes that do not parse.
        """
        try:
            split = events_pb2.SplitStepEvent.FromString(self.data)
        except DecodeError as exc:
            raise NotABatchError(f"a split event of {len(self.data)} bytes does not parse: {exc}") from exc
        return split.event, split.zstd_observation


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


def split_observation_size(packed: bytes) -> int | None:
    """The size a split event's observation data decompresses to, from its zstd frame's header;
    None when the frame does not say (or is no zstd frame)."""
    try:
        size = zstandard.frame_content_size(packed)
    except zstandard.ZstdError:
        return None
    return size if size >= 0 else None


def _parse_event(data: bytes) -> events_pb2.StepEvent:
    try:
        return events_pb2.StepEvent.FromString(data)
    except DecodeError as exc:
        raise NotABatchError(f"an event of {len(data)} bytes does not parse: {exc}") from exc


class NotABatchError(ValueError):
    """The bytes hold something else than `events` entries (a field this reader does not know,
    or a cut entry)."""


def frame_event(data: bytes) -> bytes:
    """One serialized StepEvent as an entry of a batch's bytes (compressed from `COMPRESS_FROM`
    bytes on, unless that does not make it smaller)."""
    if len(data) >= COMPRESS_FROM:
        packed = compress_event(data)
        if len(packed) < len(data):
            return _field(ZSTD_EVENTS_TAG, packed)
    return _field(EVENTS_TAG, data)


def frame_step_event(event: events_pb2.StepEvent) -> bytes:
    """`event` as an entry of a batch's bytes: split (`split_events`) when its observation is a
    tensor of `COMPRESS_FROM` bytes or more and the rest of it is smaller than that, else as
    `frame_event` frames it. Splitting takes the data out of the event's observation: the event
    is spent (the env host sends each event once)."""
    value = observation_of(event)
    if value is not None and value.WhichOneof("kind") == "tensor":
        tensor = value.tensor
        if len(tensor.data) >= COMPRESS_FROM:
            data = tensor.data
            tensor.ClearField("data")
            light = event.SerializeToString()
            if len(light) < COMPRESS_FROM:
                packed = compress_event(data)
                split = _field(SPLIT_EVENT_TAG, light) + _field(SPLIT_OBSERVATION_TAG, packed)
                return _field(SPLIT_EVENTS_TAG, split)
            tensor.data = data  # the rest is large too (a final observation, a frame): whole
    return frame_event(event.SerializeToString())


def compress_event(data: bytes) -> bytes:
    """A serialized StepEvent as a zstd frame (with its size, so a reader allocates once)."""
    compressor = getattr(_codecs, "compressor", None)
    if compressor is None:
        compressor = _codecs.compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=True)
    return compressor.compress(data)


def decompress_event(data: bytes) -> bytes:
    """The serialized StepEvent of a `compress_event` frame.

    Raises:
        NotABatchError: the bytes are not a whole zstd frame (or expand past MAX_EVENT_BYTES).
    """
    decompressor = getattr(_codecs, "decompressor", None)
    if decompressor is None:
        decompressor = _codecs.decompressor = zstandard.ZstdDecompressor()
    try:
        return decompressor.decompress(data, max_output_size=MAX_EVENT_BYTES)
    except zstandard.ZstdError as exc:
        raise NotABatchError(f"a compressed event of {len(data)} bytes does not decompress: {exc}") from exc


def entries(batch: bytes) -> list[EntryBytes]:
    """The events of a serialized StepEventBatch as they came (compressed or not), in order.

    Raises:
        NotABatchError: when the bytes hold other fields than `events`, `zstd_events` and
            `split_events`, or a cut entry.
    """
    out: list[EntryBytes] = []
    view = memoryview(batch)
    size = len(view)
    position = 0
    while position < size:
        tag = view[position]
        form = _TAG_FORMS.get(tag)
        if form is None:
            raise NotABatchError(f"field tag {tag:#x} at byte {position} of a StepEventBatch")
        length, position = _read_varint(view, position + 1)
        end = position + length
        if end > size:
            raise NotABatchError(f"an entry of {length} bytes at byte {position} runs past the {size}-byte batch")
        out.append(EntryBytes(bytes(view[position:end]), form))
        position = end
    return out


def event_bytes(batch: bytes) -> Iterator[bytes]:
    """The serialized StepEvents of a serialized StepEventBatch, in order (decompressed).

    Raises:
        NotABatchError: before yielding anything, when the bytes are not a batch's entries
            (see `entries`); while yielding, for a compressed entry that does not decompress.
    """
    return (entry.event_bytes() for entry in entries(batch))


def _field(tag: int, data: bytes) -> bytes:
    """A length-delimited protobuf field: its tag byte, the length, the bytes."""
    return bytes((tag,)) + encode_varint(len(data)) + data


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(view: memoryview, position: int) -> tuple[int, int]:
    value = shift = 0
    while position < len(view):
        byte = view[position]
        value |= (byte & 0x7F) << shift
        position += 1
        if not byte & 0x80:
            return value, position
        shift += 7
        if shift > 63:
            break
    raise NotABatchError(f"a bad length at byte {position} of a StepEventBatch")


def parse_batch(batch: bytes) -> list[events_pb2.StepEvent]:
    """The StepEvents of a serialized StepEventBatch, in order.

    Raises:
        NotABatchError: see `event_bytes`.
    """
    return [entry.event() for entry in entries(batch)]
