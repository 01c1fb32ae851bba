"""Rendered frames checked against their declared size (JPEG decoded, or its header read)."""

from __future__ import annotations

from simulusion.env.v1 import environment_pb2 as env_pb

from platform_contracts.compliance.messages import one_line
from platform_contracts.compliance.results import CheckFailed


def check_frame(frame: env_pb.Frame, where: str) -> tuple[int, int]:
    """Decode a frame and check it against its declared size; returns (width, height)."""
    if frame.width <= 0 or frame.height <= 0 or not frame.data:
        raise CheckFailed(
            f"{where}: no frame (width {frame.width}, height {frame.height}, {len(frame.data)} bytes)"
        )
    declared = (frame.width, frame.height)
    if frame.encoding == "rgb":
        if len(frame.data) != frame.width * frame.height * 3:
            raise CheckFailed(f"{where}: {len(frame.data)} bytes of rgb, not {frame.width}x{frame.height}x3")
        return declared
    if frame.encoding != "jpeg":
        raise CheckFailed(f"{where}: unknown frame encoding {frame.encoding!r} (expected 'jpeg' or 'rgb')")
    try:
        actual = jpeg_size(frame.data)
    except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
        raise CheckFailed(f"{where}: the JPEG frame does not decode: {one_line(exc)}") from None
    if actual != declared:
        raise CheckFailed(
            f"{where}: the JPEG frame is {actual[0]}x{actual[1]} but declares {declared[0]}x{declared[1]}"
        )
    return declared


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a JPEG: decoded with simplejpeg where installed, else read from its header."""
    try:
        import simplejpeg
    except ImportError:
        return jpeg_header_size(data)
    pixels = simplejpeg.decode_jpeg(data, colorspace="RGB")
    return int(pixels.shape[1]), int(pixels.shape[0])


def jpeg_header_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a JPEG, read from its start-of-frame marker without decoding it."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("no JPEG start-of-image marker")
    offset = 2
    while offset + 4 <= len(data):
        if data[offset] != 0xFF:
            raise ValueError(f"a broken marker at byte {offset}")
        marker = data[offset + 1]
        length = int.from_bytes(data[offset + 2 : offset + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # start of frame
            height = int.from_bytes(data[offset + 5 : offset + 7], "big")
            width = int.from_bytes(data[offset + 7 : offset + 9], "big")
            return width, height
        offset += 2 + length
    raise ValueError("no start-of-frame marker")
