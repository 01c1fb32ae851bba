"""The session's WebSocket stream: binary protobuf EnvRequest out, EnvResponse back, in lockstep.

The socket is read in the calling thread (`BlockingWebSocket`): a step costs one write and
one read, with no thread hand-off.
"""

from __future__ import annotations

from simulusion.env.v1 import environment_pb2 as env_pb
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from platform_sdk import errors
from platform_sdk.client.ws_connection import BlockingWebSocket

_parse_response = env_pb.EnvResponse.FromString


def _ws_url(http_url: str, session_id: str, token: str | None) -> str:
    base = "ws" + http_url[len("http"):] if http_url.startswith("http") else http_url
    url = f"{base}/v0/sessions/{session_id}/stream"
    return f"{url}?token={token}" if token else url


class SessionStream:
    """One WebSocket per session, opened once and kept for the session's life.

    Args:
        http_url: the platform's base URL (`http://` or `https://`).
        session_id: the session to stream.
        token: the API token, if the platform needs one.
        open_timeout: seconds allowed to connect and complete the WebSocket handshake.
        read_timeout: seconds `call` waits for a response; None (the default) waits forever.
            After a timeout the stream is closed: whether that step ran is unknown.
    """

    def __init__(
        self,
        http_url: str,
        session_id: str,
        token: str | None,
        open_timeout: float = 30.0,
        read_timeout: float | None = None,
    ) -> None:
        self.session_id = session_id
        self.read_timeout = read_timeout
        self._next_id = 0
        url = _ws_url(http_url, session_id, token)
        try:
            self._ws = BlockingWebSocket(url, open_timeout=open_timeout)
        except InvalidStatus as exc:
            raise errors.PlatformError(
                f"session {session_id}: the stream was refused with HTTP {exc.response.status_code}",
                status=exc.response.status_code,
                session_id=session_id,
            ) from None
        except InvalidHandshake as exc:
            raise errors.PlatformUnavailableError(
                f"session {session_id}: no WebSocket handshake at {url}: {exc}", session_id=session_id
            ) from None
        except OSError as exc:
            raise errors.PlatformUnavailableError(
                f"session {session_id}: cannot open the stream at {url}: {exc}", session_id=session_id
            ) from None

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        """Send one request and wait for its response."""
        return self.receive(self.send(request))

    def send(self, request: env_pb.EnvRequest) -> int:
        """Send one request (its id is set here) without waiting; returns the id for `receive`."""
        self._next_id += 1
        request.id = request_id = self._next_id
        try:
            self._ws.send(request.SerializeToString())
        except ConnectionClosed as exc:
            raise self._closed_error(exc) from None
        except OSError as exc:
            self._ws.close()
            raise errors.PlatformUnavailableError(
                f"session {self.session_id}: the stream failed: {exc}", session_id=self.session_id
            ) from None
        return request_id

    def receive(self, request_id: int) -> env_pb.EnvResponse:
        """Wait for the response to request `request_id` (the next one on the stream)."""
        ws = self._ws
        try:
            data = ws.recv(self.read_timeout)
        except ConnectionClosed as exc:
            raise self._closed_error(exc) from None
        except TimeoutError:
            ws.close()
            raise errors.PlatformUnavailableError(
                f"session {self.session_id}: no response to request {request_id} within {self.read_timeout} s;"
                " the stream is closed (the request may or may not have run)",
                session_id=self.session_id,
            ) from None
        except OSError as exc:
            ws.close()
            raise errors.PlatformUnavailableError(
                f"session {self.session_id}: the stream failed: {exc}", session_id=self.session_id
            ) from None
        if data.__class__ is str:
            raise errors.PlatformError(
                f"session {self.session_id}: unexpected text message {data[:200]!r}", session_id=self.session_id
            )
        response = _parse_response(data)
        if response.id != request_id:
            raise errors.PlatformError(
                f"session {self.session_id}: response id {response.id} does not match request {request_id}",
                session_id=self.session_id,
            )
        return response

    def close(self) -> None:
        """Send a close frame and close the socket. Idempotent."""
        self._ws.close()

    def _closed_error(self, exc: ConnectionClosed) -> errors.PlatformError:
        sid = self.session_id
        code = exc.rcvd.code if exc.rcvd else None
        reason = exc.rcvd.reason if exc.rcvd else "no close frame"
        if code == 4404:
            return errors.SessionNotFoundError(f"session {sid}: {reason}", session_id=sid)
        if code == 4410:
            return errors.SessionClosedError(f"session {sid}: {reason}", session_id=sid)
        if code == 4401:
            return errors.PlatformError(f"session {sid}: the stream was refused: {reason}", status=401, session_id=sid)
        if exc.rcvd is None and exc.sent is not None and exc.sent.code == 1000:
            return errors.SessionClosedError(f"session {sid}: the stream was closed by the client", session_id=sid)
        return errors.PlatformUnavailableError(f"session {sid}: the stream closed ({code}: {reason})", session_id=sid)
