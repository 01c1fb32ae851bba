"""The session's WebSocket stream: binary protobuf EnvRequest out, EnvResponse back, in lockstep."""

from __future__ import annotations

import socket

from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from platform_sdk import errors
from simulusion.env.v1 import environment_pb2 as env_pb


def _ws_url(http_url: str, session_id: str, token: str | None) -> str:
    base = "ws" + http_url[len("http"):] if http_url.startswith("http") else http_url
    url = f"{base}/v0/sessions/{session_id}/stream"
    return f"{url}?token={token}" if token else url


class SessionStream:
    """One WebSocket per session, opened once and kept for the session's life."""

    def __init__(self, http_url: str, session_id: str, token: str | None, open_timeout: float = 30.0) -> None:
        self.session_id = session_id
        self._next_id = 0
        url = _ws_url(http_url, session_id, token)
        try:
            self._ws: ClientConnection = connect(
                url, compression=None, open_timeout=open_timeout, max_size=None, ping_interval=None, legacy=True
            )
        except InvalidStatus as exc:
            raise errors.PlatformError(
                f"session {session_id}: the stream was refused with HTTP {exc.response.status_code}",
                status=exc.response.status_code,
                session_id=session_id,
            ) from None
        except OSError as exc:
            raise errors.PlatformUnavailableError(
                f"session {session_id}: cannot open the stream at {url}: {exc}", session_id=session_id
            ) from None
        self._ws.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        """Send one request and wait for its response."""
        self._next_id += 1
        request.id = self._next_id
        try:
            self._ws.send(request.SerializeToString())
            data = self._ws.recv()
        except ConnectionClosed as exc:
            reason = exc.rcvd.reason if exc.rcvd else "no close frame"
            code = exc.rcvd.code if exc.rcvd else None
            if code == 4404:
                raise errors.SessionNotFoundError(f"session {self.session_id}: {reason}", session_id=self.session_id) from None
            if code == 4410:
                raise errors.SessionClosedError(f"session {self.session_id}: {reason}", session_id=self.session_id) from None
            raise errors.PlatformUnavailableError(
                f"session {self.session_id}: the stream closed ({code}: {reason})", session_id=self.session_id
            ) from None
        if isinstance(data, str):
            raise errors.PlatformError(f"session {self.session_id}: unexpected text message {data[:200]!r}")
        response = env_pb.EnvResponse.FromString(data)
        if response.id != request.id:
            raise errors.PlatformError(
                f"session {self.session_id}: response id {response.id} does not match request {request.id}"
            )
        return response

    def close(self) -> None:
        self._ws.close()
