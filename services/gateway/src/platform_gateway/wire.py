"""Read the error code of a serialized `EnvResponse` without decoding the message.

The WebSocket path forwards responses as bytes; it only needs to know whether one says the
instance is gone (ERROR_CODE_UNAVAILABLE). Walking the top-level fields costs a few
microseconds: a response has two or three of them.
"""

from __future__ import annotations

_ERROR_FIELD = 2  # EnvResponse.error
_CODE_FIELD = 1  # Error.code


def _varint(data: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7


def _field(data: bytes, wanted: int) -> tuple[int, int | bytes] | None:
    """(wire type, value) of the first top-level field `wanted`, or None."""
    i, n = 0, len(data)
    while i < n:
        tag, i = _varint(data, i)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, i = _varint(data, i)
            if number == wanted:
                return wire, value
        elif wire == 2:
            length, i = _varint(data, i)
            if number == wanted:
                return wire, data[i : i + length]
            i += length
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            return None
    return None


def error_code(response: bytes) -> int | None:
    """The `ErrorCode` of a serialized `EnvResponse`: None when it carries no error.

    A malformed message reads as no error: the client decodes it and reports it.
    """
    try:
        found = _field(response, _ERROR_FIELD)
        if found is None or found[0] != 2:
            return None
        code = _field(found[1], _CODE_FIELD)  # type: ignore[arg-type]
        return int(code[1]) if code is not None and code[0] == 0 else 0
    except IndexError:
        return None
