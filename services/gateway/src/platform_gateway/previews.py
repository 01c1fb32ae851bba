"""Environment previews: one JPEG frame per catalog entry, made once and kept on disk.

A preview is made by a short session of the entry (not recorded): reset with seed 0, one
render, close. Files live under `<PLATFORM_CACHE_DIR>/previews/`, named after the entry's id
and a short hash of its content, so an entry whose definition changes gets a new preview.
An entry that renders no frames leaves a small marker file instead, so it is not started
again on every request; any other failure is not remembered.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import tempfile
from pathlib import Path

from simulusion.control.v1 import control_pb2 as ctl
from simulusion.session.v1.options_pb2 import SessionOptions

from platform_gateway.broker import BrokerClient
from platform_gateway.env_commands import EnvCommands
from platform_gateway.errors import (
    EnvTimeoutError,
    GatewayError,
    NotFoundError,
    UnavailableError,
    UnimplementedError,
)
from platform_gateway.json_views import frame_jpeg

log = logging.getLogger(__name__)

PREVIEW_SEED = 0
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class NoFramesError(NotFoundError):
    """The environment has no frames to show (no render mode, or a text-only one)."""

    code = "no_frames"


def entry_hash(entry: ctl.CatalogEntry, length: int = 12) -> str:
    """A short hash of what defines the entry's environment (not its description)."""
    digest = hashlib.sha256()
    for part in (entry.id, entry.gymnasium_id, entry.factory, entry.path, entry.kwargs_json, entry.image):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:length]


def preview_name(entry: ctl.CatalogEntry) -> str:
    """The file stem of the entry's preview, e.g. ``cartpole-1a2b3c4d5e6f``."""
    return f"{_UNSAFE.sub('_', entry.id)}-{entry_hash(entry)}"


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the whole new one, never a part.

    The bytes go to a temporary file in the same folder, are fsynced, then renamed over `path`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


class PreviewCache:
    """Makes, keeps and serves one preview frame per catalog entry.

    Args:
        cache_dir: the platform's cache folder; previews go to its `previews/` subfolder
            (created on the first write).
        broker: creates and closes the preview sessions.
        commands: runs reset and render in them.
        concurrency: how many preview sessions may run at once, all entries together (one: a
            page full of uncached previews never takes more than one process start's share of
            the machine from the sessions users start meanwhile).
    """

    def __init__(self, cache_dir: Path, broker: BrokerClient, commands: EnvCommands, concurrency: int = 1) -> None:
        self.folder = Path(cache_dir) / "previews"
        self._broker = broker
        self._commands = commands
        self._slots = asyncio.Semaphore(concurrency)
        self._locks: dict[str, asyncio.Lock] = {}

    def image_path(self, entry: ctl.CatalogEntry) -> Path:
        return self.folder / f"{preview_name(entry)}.jpg"

    def marker_path(self, entry: ctl.CatalogEntry) -> Path:
        """The file saying the entry renders no frames (it holds the reason)."""
        return self.folder / f"{preview_name(entry)}.noframes"

    def cached(self, entry: ctl.CatalogEntry) -> bool:
        """Whether the entry's preview is on disk (a request serves it without a session)."""
        return self.image_path(entry).is_file()

    async def get(self, entry: ctl.CatalogEntry) -> bytes:
        """The entry's preview as JPEG bytes, made now when it is not cached.

        Raises:
            NoFramesError: the environment renders no frames (remembered).
            EnvTimeoutError: the environment did not answer in time.
            UnavailableError: the preview session could not be made (not remembered).
        """
        found = self._read(entry)
        if found is not None:
            return found
        lock = self._locks.setdefault(entry.id, asyncio.Lock())
        async with lock:
            found = self._read(entry)  # made by the request we waited for
            if found is not None:
                return found
            async with self._slots:
                try:
                    data = await self._make(entry)
                except NoFramesError as exc:
                    await asyncio.to_thread(self._store, self.marker_path(entry), exc.message.encode())
                    raise
            await asyncio.to_thread(self._store, self.image_path(entry), data)
            return data

    def _read(self, entry: ctl.CatalogEntry) -> bytes | None:
        """The cached preview, or None.

        Raises:
            NoFramesError: the entry's marker says it renders no frames.
        """
        try:
            return self.image_path(entry).read_bytes()
        except FileNotFoundError:
            pass
        try:
            reason = self.marker_path(entry).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return None
        raise NoFramesError(reason or f"{entry.id} renders no frames")

    def _store(self, path: Path, data: bytes) -> None:
        """Write one preview or marker; older versions of the same entry are removed."""
        write_atomic(path, data)
        stem = re.escape(path.name.rsplit("-", 1)[0])
        older = re.compile(rf"^{stem}-[0-9a-f]{{12}}\.(jpg|noframes)$")
        for other in self.folder.iterdir():
            if other != path and older.match(other.name):
                other.unlink(missing_ok=True)

    async def _make(self, entry: ctl.CatalogEntry) -> bytes:
        """One frame of a fresh, unrecorded session of the entry, after `reset(seed=0)`."""
        env_id = entry.id
        try:
            info = await self._broker.create_session(SessionOptions(env_id=env_id, preview=True))
        except GatewayError as exc:
            raise _failure(env_id, "could not start a session", exc) from None
        streams = self._commands.streams
        streams.directory.remember(info)
        try:
            if not info.spec.render_mode:
                raise NoFramesError(f"{env_id} renders no frames (it has no render mode)")
            await self._commands.reset(info.id, seed=PREVIEW_SEED)
            frame = await self._commands.render(info.id)
            return frame_jpeg(frame)
        except UnimplementedError:
            raise NoFramesError(f"{env_id} renders no frames (render mode {info.spec.render_mode!r})") from None
        except NoFramesError:
            raise
        except GatewayError as exc:
            raise _failure(env_id, "failed", exc) from None
        except ValueError as exc:  # a raw frame whose size does not match its bytes
            raise UnavailableError(f"the preview of {env_id} failed: unreadable frame ({exc})") from None
        finally:
            streams.forget(info.id)
            try:
                await self._broker.close_session(info.id, "preview taken")
            except GatewayError as exc:  # the broker's idle timeout stops it later
                log.warning("preview of %s: could not close session %s: %s", env_id, info.id, exc.message)


def _failure(env_id: str, what: str, exc: GatewayError) -> GatewayError:
    message = f"the preview of {env_id} {what}: {exc.message}"
    if isinstance(exc, EnvTimeoutError):
        return EnvTimeoutError(message, log_tail=exc.log_tail)
    return UnavailableError(message, log_tail=exc.log_tail)
