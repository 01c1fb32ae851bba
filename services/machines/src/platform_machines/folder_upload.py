"""A `FolderSource` sent to the machine over the experiment's SSH connection: packed as tar.gz
while it goes (nothing is written on the platform's disk) into `tar -xz` on the machine, which
unpacks it into the run folder's `checkout/`.

Progress goes to the experiment's log as lines of their own (`[platform] uploading ...`, at
each quarter, and the end), through `progress`; the caller writes the same bytes at the start
of the log file on the machine, so both copies of the log stay the same byte for byte.
Packing runs in a thread; each chunk is handed to the event loop and waits for the channel to
take it (`drain`), so a slow link holds the packing back instead of filling memory.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import tarfile
import time
from collections.abc import Callable, Coroutine
from typing import IO, Any, cast

import asyncssh

from platform_machines.errors import InvalidExperimentError
from platform_machines.experiment_script import run_dir_expr
from platform_machines.folder_source import MAX_SETTING, FolderSource, size_text

CHUNK = 256 * 1024
UNPACK_FAILED = 93
Progress = Callable[[str], Coroutine[Any, Any, None]]


def unpack_command(experiment_id: str) -> str:
    """What runs on the machine: the archive on stdin, unpacked into `checkout/`; on failure the
    run folder is removed and tar's words are on stderr."""
    script = (f'umask 077; d={run_dir_expr(experiment_id)}; mkdir -p "$d/checkout" || exit {UNPACK_FAILED}; '
              f'tar -xzf - --no-same-owner -C "$d/checkout" || {{ cd / && rm -rf "$d"; exit {UNPACK_FAILED}; }}')
    return f"bash -c {shlex.quote(script)}"


async def upload_folder(conn: asyncssh.SSHClientConnection, experiment_id: str, source: FolderSource,
                        progress: Progress) -> None:
    """Raises:
        InvalidExperimentError: (field "folder") the machine could not unpack it (tar's words:
            no disk space, no tar), or the folder changed while it was packed.
        asyncssh.Error, OSError: the connection failed.
    """
    loop = asyncio.get_running_loop()
    began = time.monotonic()
    files = sum(1 for _ in source.files)
    await progress(f"[platform] uploading {_shown(source)} ({files} entries, {size_text(source.total_bytes)}"
                   f"{', .gitignore honoured' if source.git else ''}) into the run folder's checkout/\n")
    process = await conn.create_process(unpack_command(experiment_id), encoding=None)
    sink = _ChannelSink(loop, process.stdin)
    marks = _Marks(source.total_bytes, lambda line: asyncio.run_coroutine_threadsafe(progress(line), loop).result())
    packing_error: BaseException | None = None
    try:
        await asyncio.to_thread(_pack, source, sink, marks.add)
    except asyncio.CancelledError:
        sink.aborted = True
        process.close()
        raise
    except _FolderChanged as exc:
        packing_error = exc
    except (OSError, asyncssh.Error) as exc:  # most often the machine's tar stopped reading: its words say why
        packing_error = exc
    if packing_error is None:
        process.stdin.write_eof()
    else:
        process.close()
    result = await process.wait()
    said = (result.stderr or b"").decode(errors="replace").strip() if isinstance(result.stderr, bytes) else ""
    if isinstance(packing_error, _FolderChanged):
        raise InvalidExperimentError(f"folder {str(source.folder)!r}: {packing_error}", field="folder")
    if result.exit_status is None and packing_error is not None:
        raise packing_error  # the connection went away
    if result.exit_status != 0 or packing_error is not None:
        why = said[-1000:] or (str(packing_error) if packing_error else f"exit {result.exit_status}")
        raise InvalidExperimentError(f"the machine could not unpack the folder {str(source.folder)!r} into the run "
                                     f"folder: {why}", field="folder")
    await progress(f"[platform] uploaded {files} entries, {size_text(source.total_bytes)} ({size_text(sink.sent)} packed) in "
                   f"{time.monotonic() - began:.1f} s\n")


class _FolderChanged(Exception):
    pass


def _pack(source: FolderSource, sink: _ChannelSink, on_file: Callable[[int], None]) -> None:
    """tar.gz of the listed entries into `sink` (in a thread). Links are packed as links; a
    regular file is opened without following a link (O_NOFOLLOW), so a file swapped for a link
    since it was listed is never read through it."""
    packed = 0
    # a stream ("w|gz") only ever writes to its file object
    with tarfile.open(fileobj=cast(IO[bytes], sink), mode="w|gz", format=tarfile.PAX_FORMAT) as tar:
        for name in source.files:
            path = os.path.join(source.folder, name)
            try:
                info = tar.gettarinfo(path, arcname=name)
            except FileNotFoundError:  # deleted since it was listed
                continue
            if info is None:  # a socket or a device: not packed
                continue
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if not info.isreg():
                tar.addfile(info)
                on_file(0)
                continue
            packed += info.size
            if packed > source.max_bytes:
                raise _FolderChanged(f"it grew past the {size_text(source.max_bytes)} allowed ({MAX_SETTING}) while it was "
                                     "packed")
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError as exc:
                raise _FolderChanged(f"{name} changed while the folder was packed ({exc.strerror})") from None
            with os.fdopen(fd, "rb") as file:
                try:
                    tar.addfile(info, file)
                except OSError as exc:  # shorter than when it was read
                    raise _FolderChanged(f"{name} changed while the folder was packed ({exc})") from None
            on_file(info.size)
    sink.flush()


class _ChannelSink:
    """A file-like `write` for tarfile, in the packing thread: chunks go to the channel on the loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stdin: asyncssh.SSHWriter[bytes]) -> None:
        self.loop = loop
        self.stdin = stdin
        self.buffer = bytearray()
        self.sent = 0
        self.aborted = False

    def write(self, data: bytes) -> int:
        self.buffer += data
        if len(self.buffer) >= CHUNK:
            self.flush()
        return len(data)

    def flush(self) -> None:
        if self.aborted:
            raise OSError("the upload was stopped")
        if not self.buffer:
            return
        chunk = bytes(self.buffer)
        self.buffer.clear()
        asyncio.run_coroutine_threadsafe(self._send(chunk), self.loop).result()
        self.sent += len(chunk)

    async def _send(self, chunk: bytes) -> None:
        self.stdin.write(chunk)
        await self.stdin.drain()


class _Marks:
    """A progress line at each quarter of the bytes packed."""

    def __init__(self, total: int, say: Callable[[str], object]) -> None:
        self.total = total
        self.done = 0
        self.next = 25
        self.say = say

    def add(self, size: int) -> None:
        self.done += size
        if not self.total or self.next >= 100:
            return
        percent = self.done * 100 // self.total
        if percent >= self.next:
            self.say(f"[platform] uploading: {percent}% ({size_text(self.done)})\n")
            while self.next <= percent:
                self.next += 25


def _shown(source: FolderSource) -> str:
    return str(source.folder).encode("utf-8", "replace").decode("utf-8")

