"""A lockstep connection to an environment server: one gRPC `Environment/Connect` stream."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Self

import grpc
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import environment_pb2_grpc as env_grpc

_END = object()


class ConnectionFailed(Exception):
    """The stream broke, or a response did not come in time."""


class GrpcConnection:
    """`call(EnvRequest) -> EnvResponse` over one stream, one request in flight at a time.

    Args:
        address: the server's gRPC address ("unix:/path.sock" or "host:port").
        call_timeout: seconds to wait for each response; after a timeout the stream is closed.
        metadata: gRPC metadata of the stream, e.g. `[("session-id", sid)]` for an env host.
    """

    def __init__(
        self, address: str, call_timeout: float = 60.0, metadata: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.address = address
        self.call_timeout = call_timeout
        self._channel = grpc.insecure_channel(address)
        self._requests: queue.SimpleQueue[env_pb.EnvRequest | None] = queue.SimpleQueue()
        self._responses: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._call = env_grpc.EnvironmentStub(self._channel).Connect(
            iter(self._requests.get, None), metadata=tuple(metadata) or None
        )
        self._broken: str = ""
        self._reader = threading.Thread(target=self._read, args=(self._call,), daemon=True)
        self._reader.start()

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        """Send `request` and wait for its response.

        Raises:
            ConnectionFailed: the stream is broken or the response did not come in time.
        """
        if self._broken:
            raise ConnectionFailed(self._broken)
        self._requests.put(request)
        try:
            item = self._responses.get(timeout=self.call_timeout)
        except queue.Empty:
            self._broken = f"no response from {self.address} within {self.call_timeout:g} s"
            self.close()
            raise ConnectionFailed(self._broken) from None
        if isinstance(item, env_pb.EnvResponse):
            return item
        self._broken = str(item) if item is not _END else f"{self.address} closed the stream"
        raise ConnectionFailed(self._broken)

    def close(self) -> None:
        """End the stream and close the channel (idempotent)."""
        self._requests.put(None)
        self._call.cancel()
        self._channel.close()

    def _read(self, responses: Iterator[env_pb.EnvResponse]) -> None:
        try:
            for response in responses:
                self._responses.put(response)
            self._responses.put(_END)
        except grpc.RpcError as exc:
            detail = exc.details() if hasattr(exc, "details") else str(exc)
            self._responses.put(f"the stream to {self.address} failed: {detail}")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
