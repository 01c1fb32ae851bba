"""The wire form of a `StepEventBatch` (simulusion/bus/v1/events.proto), one event at a time.

A batch's bytes are its events' bytes, each behind a field tag and its length: field 1
(`events`) for an event as it is, field 2 (`zstd_events`) for an event of `COMPRESS_FROM` bytes
or more as a zstd frame (an image observation shrinks ~500x: Pong's 100 KB frames to ~200 bytes,
in ~25 µs), so JetStream, the recorder and its part files move a fraction of the bytes. The
entries' order in the bytes is the events' order. So the env host can join events serialized
apart into a batch (splitting one larger than a NATS message allows), and the recorder can take
each event's own bytes out of a batch (to store them as they came, without serializing or
compressing the event again).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import NamedTuple

import zstandard
from simulusion.bus.v1 import events_pb2

EVENTS_TAG = 0x0A  # field 1 (`events`), length-delimited
ZSTD_EVENTS_TAG = 0x12  # field 2 (`zstd_events`), length-delimited
COMPRESS_FROM = 4096  # serialized events of at least this many bytes are sent compressed
# zstd's fast mode: on Pong events (a 100 KB screen and a 3 KB JPEG) 18 µs against level 3's
# 30 µs, for the same ~1.75 KB; the env host compresses every large event of a recorded session.
ZSTD_LEVEL = -1
# A compressed event never expands to more than this (a NATS message is far smaller anyway).
MAX_EVENT_BYTES = 1 << 30

_codecs = threading.local()  # zstd (de)compressors are not to be shared between threads


class EntryBytes(NamedTuple):
    """One event of a batch as it came: its bytes, zstd-compressed or not."""

    data: bytes
    compressed: bool

    def event_bytes(self) -> bytes:
        """The serialized StepEvent."""
        return decompress_event(self.data) if self.compressed else self.data


class NotABatchError(ValueError):
    """The bytes hold something else than `events` entries (a field this reader does not know,
    or a cut entry)."""


def frame_event(data: bytes) -> bytes:
    """One serialized StepEvent as an entry of a batch's bytes (compressed from `COMPRESS_FROM`
    bytes on, unless that does not make it smaller)."""
    if len(data) >= COMPRESS_FROM:
        packed = compress_event(data)
        if len(packed) < len(data):
            return bytes((ZSTD_EVENTS_TAG,)) + encode_varint(len(packed)) + packed
    return bytes((EVENTS_TAG,)) + encode_varint(len(data)) + data


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
        NotABatchError: when the bytes hold other fields than `events` and `zstd_events`, or a
            cut entry.
    """
    out: list[EntryBytes] = []
    view = memoryview(batch)
    size = len(view)
    position = 0
    while position < size:
        tag = view[position]
        if tag != EVENTS_TAG and tag != ZSTD_EVENTS_TAG:
            raise NotABatchError(f"field tag {tag:#x} at byte {position} of a StepEventBatch")
        length, position = _read_varint(view, position + 1)
        end = position + length
        if end > size:
            raise NotABatchError(f"an entry of {length} bytes at byte {position} runs past the {size}-byte batch")
        out.append(EntryBytes(bytes(view[position:end]), tag == ZSTD_EVENTS_TAG))
        position = end
    return out


def event_bytes(batch: bytes) -> Iterator[bytes]:
    """The serialized StepEvents of a serialized StepEventBatch, in order (decompressed).

    Raises:
        NotABatchError: before yielding anything, when the bytes are not a batch's entries
            (see `entries`); while yielding, for a compressed entry that does not decompress.
    """
    return (entry.event_bytes() for entry in entries(batch))


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
    return [events_pb2.StepEvent.FromString(data) for data in event_bytes(batch)]
