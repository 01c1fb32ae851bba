"""The wire form of a `StepEventBatch` (simulusion/bus/v1/events.proto), one event at a time.

A batch's bytes are its events' bytes, each behind the tag of field 1 (`events`) and its length:
so the env host can join events serialized apart into a batch (splitting one larger than a NATS
message allows), and the recorder can take each event's own bytes out of a batch (to store them
as they came, without serializing the event again).
"""

from __future__ import annotations

from collections.abc import Iterator

EVENTS_TAG = 0x0A  # field 1, length-delimited


class NotABatchError(ValueError):
    """The bytes hold something else than `events` entries (a field this reader does not know,
    or a cut entry); parse them with `StepEventBatch.FromString`."""


def frame_event(data: bytes) -> bytes:
    """One serialized StepEvent as an entry of a batch's bytes."""
    return bytes((EVENTS_TAG,)) + encode_varint(len(data)) + data


def event_bytes(batch: bytes) -> Iterator[bytes]:
    """The serialized StepEvents of a serialized StepEventBatch, in order.

    Raises:
        NotABatchError: before yielding anything, when the bytes are not only `events` entries.
    """
    spans: list[tuple[int, int]] = []
    view = memoryview(batch)
    size = len(view)
    position = 0
    while position < size:
        if view[position] != EVENTS_TAG:
            raise NotABatchError(f"field tag {view[position]:#x} at byte {position} of a StepEventBatch")
        length, position = _read_varint(view, position + 1)
        end = position + length
        if end > size:
            raise NotABatchError(f"an entry of {length} bytes at byte {position} runs past the {size}-byte batch")
        spans.append((position, end))
        position = end
    return (bytes(view[start:end]) for start, end in spans)


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
