"""Errors of the environment server."""

from __future__ import annotations

from simulusion.env.v1 import environment_pb2 as env_pb


class ServerError(Exception):
    """Base error of the environment server."""


class StartupError(ServerError):
    """The server cannot start (bad arguments, a broken factory, unsupported spaces): exit 2."""


class CommandError(ServerError):
    """A command failed; it is answered with `Error(code, message)` and the stream stays up.

    Attributes:
        code: an `ErrorCode` of the environment protocol.
        message: what went wrong, for the caller.
    """

    def __init__(self, code: env_pb.ErrorCode.ValueType, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
