"""A recording's finished files as a streamed `.tar`, read through the recorder in chunks.

`tarfile` writes the archive in streaming mode ("w|") in a worker thread; each file's bytes come
from `recordings.read` (at most 4 MiB per request, so a file of any size fits NATS), fetched on
the event loop, and the archive's bytes go back to the event loop through a small queue, so
memory stays at a few chunks whatever the recording's size. A client that stops reading stops
the worker at its next chunk.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import tarfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import Any

from platform_gateway.recorder import RecorderClient

log = logging.getLogger(__name__)

_QUEUE_CHUNKS = 4  # archive chunks waiting for the client, at most
_STREAM_BUFFER = 1 << 20  # bytes per write of the tar stream (and per copy into it)


class _Stopped(Exception):
    """The client went away: the worker stops."""


class _RemoteFile(io.RawIOBase):
    """One finished file of the recording, read forward in chunks through the recorder."""

    def __init__(self, fetch: Callable[[int], bytes], size: int, name: str) -> None:
        super().__init__()
        self._fetch, self._size, self._name = fetch, size, name
        self._offset = 0
        self._chunk = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._chunk:
            if self._offset >= self._size:
                return 0
            self._chunk = memoryview(self._fetch(self._offset))
            if not self._chunk:
                raise OSError(f"{self._name} ended at {self._offset} of {self._size} bytes: it changed")
        view = memoryview(buffer).cast("B")
        n = min(len(view), len(self._chunk), self._size - self._offset)
        view[:n] = self._chunk[:n]
        self._chunk = self._chunk[n:]
        self._offset += n
        return n


class _QueueSink(io.RawIOBase):
    """The tar stream's output: each write goes to the event loop's queue (blocking when full)."""

    def __init__(self, put: Callable[[bytes], None]) -> None:
        super().__init__()
        self._put = put

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        if chunk:
            self._put(chunk)
        return len(chunk)


def _write_tar(prefix: str, files: Sequence[tuple[str, int]], sink: io.RawIOBase,
               fetch: Callable[[str, int], bytes], chunk: int) -> None:
    """Write the tar of `files` (name, size) to `sink`; `fetch(name, offset)` reads one chunk."""
    now = time.time()
    # typeshed's open() lacks the TarFile arguments it passes on (copybufsize)
    with tarfile.open(  # type: ignore[call-overload]
        fileobj=sink, mode="w|", bufsize=_STREAM_BUFFER, copybufsize=_STREAM_BUFFER
    ) as tar:
        for name, size in files:
            info = tarfile.TarInfo(f"{prefix}/{name}")
            info.mtime, info.mode = now, 0o644
            if not name.endswith(".npz"):  # meta.json, recording.json: read whole, at their size now
                # (an open recording's are replaced as it grows; a manifest lists an earlier size)
                data = bytearray()
                while True:
                    more = fetch(name, len(data))
                    data += more
                    if len(more) < chunk:
                        break
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:  # an episode file: written once, never changed
                info.size = size
                tar.addfile(info, io.BufferedReader(_RemoteFile(functools.partial(fetch, name), size, name)))


async def stream_archive(
    recorder: RecorderClient, recording_id: str, files: Sequence[tuple[str, int]]
) -> AsyncIterator[bytes]:
    """The bytes of `<recording_id>.tar` holding `files` (name, size) under `<recording_id>/`."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(maxsize=_QUEUE_CHUNKS)
    stopped = threading.Event()
    chunk = recorder.read_chunk

    def on_loop(coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run `coroutine` on the event loop and wait for it (from the worker thread)."""
        if stopped.is_set():
            coroutine.close()
            raise _Stopped
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def fetch(name: str, offset: int) -> bytes:
        data: bytes = on_loop(recorder.read_file(recording_id, name, offset, chunk))
        return data

    def work() -> None:
        try:
            _write_tar(recording_id, files, _QueueSink(lambda data: on_loop(queue.put(data))), fetch, chunk)
            on_loop(queue.put(None))
        except _Stopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the response, which ends broken
            try:
                on_loop(queue.put(exc))
            except _Stopped:
                pass

    worker = loop.run_in_executor(None, work)
    try:
        while (item := await queue.get()) is not None:
            if isinstance(item, BaseException):
                log.warning("archive of recording %s broken off: %s", recording_id, item)
                raise item
            yield item
        await worker
    finally:
        stopped.set()
        while not queue.empty():  # frees a worker waiting to put, so it sees `stopped`
            queue.get_nowait()
