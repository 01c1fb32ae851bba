"""The environment server's listen addresses: "unix:/path/x.sock" or "HOST:PORT".

Apart from the gRPC glue so that the framed transport (`frame_server`) does not import grpc.
"""

from __future__ import annotations

import os
import stat

from platform_sdk.server.errors import StartupError


def socket_path(address: str) -> str | None:
    """The file of a "unix:" address, else None."""
    if not address.startswith("unix:"):
        return None
    path = address[len("unix:") :]
    return "/" + path.lstrip("/") if path.startswith("//") else path


def bindable_socket_path(listen: str) -> str | None:
    """The socket file to bind for a "unix:" `listen` address (a stale socket left there by an
    earlier run is removed: bind would fail), else None.

    Raises:
        StartupError: the address names no path, or a file there that is not a socket.
    """
    path = socket_path(listen)
    if path is None:
        return None
    if not path:
        raise StartupError(f"--listen {listen!r}: no socket path")
    if os.path.exists(path):
        if not stat.S_ISSOCK(os.stat(path).st_mode):
            raise StartupError(f"--listen {listen!r}: {path} exists and is not a socket")
        os.unlink(path)
    return path
