"""The session's stream: binary protobuf EnvRequest out, EnvResponse back, in lockstep.

Two paths carry it. The direct path (`direct_link.BlockingStepLink`): the env host's step link,
opened with a ticket the gateway issues, so steps skip the gateway. The gateway's WebSocket
(`BlockingWebSocket`): where the direct path is not offered, not wanted (`direct=False`,
`PLATFORM_DIRECT=0`) or cannot be opened (the env host is out of reach). Either socket is read
in the calling thread: a step costs one write and one read, with no thread hand-off. `path`
says which one a stream uses.

When the connection is lost (the gateway or the link restarted, a dropped connection) the
stream opens a new one to the same session (the direct path first again, with a new ticket),
with back-off, for up to `reconnect_timeout` seconds, and checks
it with a `spec` request before using it. A request known not to have reached the gateway
(the connection was already gone when it was written, or the gateway had closed it before the
request arrived) is sent again on the new connection; one that may have been read raises
`OutcomeUnknownError`, and the next request reconnects. None of this costs the happy path
anything: it all happens once a read or a write has failed.
"""

from __future__ import annotations

import logging
import time

from google.protobuf.message import DecodeError
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk import errors
from platform_sdk.client.direct_link import BlockingStepLink, DirectPathUnavailable, direct_wanted, open_direct_link
from platform_sdk.client.error_map import error_from_close, error_from_env, is_session_close
from platform_sdk.client.link_errors import ConnectionClosed, InvalidHandshake, InvalidStatus
from platform_sdk.client.rest import RestClient
from platform_sdk.client.ws_connection import BlockingWebSocket

log = logging.getLogger(__name__)
_parse_response = env_pb.EnvResponse.FromString
_UNAVAILABLE = env_pb.ERROR_CODE_UNAVAILABLE
# Close codes after which the same session is worth a new connection: going away, abnormal
# closure, service restart, try again later, bad gateway (no close frame at all counts too).
_RECONNECT_CODES = frozenset({1001, 1006, 1012, 1013, 1014})
_FIRST_DELAY_S = 0.05
_MAX_DELAY_S = 1.0


def _ws_url(http_url: str, session_id: str, token: str | None) -> str:
    base = "ws" + http_url[len("http"):] if http_url.startswith("http") else http_url
    url = f"{base}/v0/sessions/{session_id}/stream"
    return f"{url}?token={token}" if token else url


class _Retry(Exception):
    """A new connection did not work out yet (internal: `_reopen` tries again)."""


class SessionStream:
    """One connection per session (a direct step link or the gateway's WebSocket), kept for the
    session's life and opened again when lost.

    Args:
        http_url: the platform's base URL (`http://` or `https://`).
        session_id: the session to stream.
        token: the API token, if the platform needs one.
        open_timeout: seconds allowed to connect and complete the WebSocket handshake.
        read_timeout: seconds `call` waits for a response; None (the default) waits forever.
            After a timeout the connection is closed: whether that step ran is unknown.
        reconnect_timeout: seconds spent opening a lost connection again before giving up
            (PlatformUnavailableError); 0 never reconnects.
        direct: try the direct path first (None: `PLATFORM_DIRECT`, default on); it needs `rest`,
            the client that asks the gateway for tickets.
    """

    def __init__(
        self,
        http_url: str,
        session_id: str,
        token: str | None,
        open_timeout: float = 30.0,
        read_timeout: float | None = None,
        reconnect_timeout: float = 30.0,
        direct: bool | None = None,
        rest: RestClient | None = None,
    ) -> None:
        self.session_id = session_id
        self.read_timeout = read_timeout
        self.open_timeout = open_timeout
        self.reconnect_timeout = reconnect_timeout
        self._next_id = 0
        self._closed_by_user = False
        self._url = _ws_url(http_url, session_id, token)
        self._rest = rest if direct_wanted(direct) else None
        self._ws: BlockingStepLink | BlockingWebSocket
        link = self._direct_link(open_timeout)
        if link is not None:
            self._ws = link
            return
        try:
            self._ws = BlockingWebSocket(self._url, open_timeout=open_timeout)
        except InvalidStatus as exc:
            raise self._refused(exc) from None
        except InvalidHandshake as exc:
            raise errors.PlatformUnavailableError(
                f"session {session_id}: no WebSocket handshake at {self._url}: {exc}", session_id=session_id
            ) from None
        except OSError as exc:
            raise errors.PlatformUnavailableError(
                f"session {session_id}: cannot open the stream at {self._url}: {exc}", session_id=session_id
            ) from None

    @property
    def path(self) -> str:
        """"direct" (the env host's step link) or "gateway" (the gateway's WebSocket)."""
        return "direct" if isinstance(self._ws, BlockingStepLink) else "gateway"

    def call(self, request: env_pb.EnvRequest, idempotent: bool = False) -> env_pb.EnvResponse:
        """Send one request and wait for its response.

        `idempotent`: the request may run twice (e.g. `spec`), so it is sent again after a lost
        connection even when it may have been read.
        """
        return self.receive(self.send(request), request, idempotent)

    def send(self, request: env_pb.EnvRequest) -> int:
        """Send one request (its id is set here) without waiting; returns the id for `receive`."""
        self._next_id += 1
        request.id = request_id = self._next_id
        data = request.SerializeToString()
        try:
            self._ws.send(data)
        except ConnectionClosed as exc:  # not sent: the connection was gone, or the write failed
            self._send_again(data, exc, time.monotonic() + self.reconnect_timeout)
        return request_id

    def receive(
        self, request_id: int, request: env_pb.EnvRequest | None = None, idempotent: bool = False
    ) -> env_pb.EnvResponse:
        """Wait for the response to request `request_id` (the next one on the stream).

        `request` (the one sent as `request_id`) is sent again on a new connection when the
        connection is lost before it reached the gateway.

        Raises:
            OutcomeUnknownError: the connection was lost after the request may have been read.
        """
        ws = self._ws
        try:
            data = ws.recv(self.read_timeout)
        except ConnectionClosed as exc:
            data = self._recover(exc, request_id, request, idempotent)
        except TimeoutError:
            raise self._timed_out(ws, request_id) from None
        if data.__class__ is str:
            raise errors.PlatformError(
                f"session {self.session_id}: unexpected text message {data[:200]!r}", session_id=self.session_id
            )
        response = _parse_response(data)  # type: ignore[arg-type]  # bytes: the test above, without isinstance's cost
        if response.id != request_id:
            raise errors.PlatformError(
                f"session {self.session_id}: response id {response.id} does not match request {request_id}",
                session_id=self.session_id,
            )
        if response.HasField("error") and response.error.code == _UNAVAILABLE:
            self._session_ended(response.error)
        return response

    def _session_ended(self, error: env_pb.Error) -> None:
        """The instance died: a direct link ends as the gateway's WebSocket does after such an
        answer (closed with 4410 and the reason), so later calls raise the same errors."""
        link = self._ws
        if isinstance(link, BlockingStepLink):
            link.end_session(error.message or f"session {self.session_id}: the environment instance died")

    def close(self) -> None:
        """Send a close frame and close the socket. Idempotent."""
        self._closed_by_user = True
        self._ws.close()

    # -- a lost connection --------------------------------------------------------------------
    def _recover(
        self, exc: ConnectionClosed, request_id: int, request: env_pb.EnvRequest | None, idempotent: bool
    ) -> bytes | str:
        """The connection ended while request `request_id` waited for its answer: send it again
        on a new connection when it is known not to have been read (or may run twice), and
        return the answer's bytes; else raise."""
        deadline = time.monotonic() + self.reconnect_timeout
        while True:
            if not self._may_reconnect(exc):
                raise self._closed_error(exc)
            if request is None or not (idempotent or self._ws.last_message_unread):
                raise errors.OutcomeUnknownError(
                    f"session {self.session_id}: the stream closed ({_describe(exc)}) after request {request_id}"
                    " was sent, before its answer: whether it ran is unknown",
                    session_id=self.session_id,
                )
            self._send_again(request.SerializeToString(), exc, deadline)
            try:
                return self._ws.recv(self.read_timeout)
            except ConnectionClosed as again:
                exc = again
            except TimeoutError:
                raise self._timed_out(self._ws, request_id) from None

    def _timed_out(self, ws: BlockingStepLink | BlockingWebSocket, request_id: int) -> errors.OutcomeUnknownError:
        ws.close()
        return errors.OutcomeUnknownError(
            f"session {self.session_id}: no response to request {request_id} within {self.read_timeout} s;"
            " the stream is closed (the request may or may not have run)",
            session_id=self.session_id,
        )

    def _send_again(self, data: bytes, exc: ConnectionClosed, deadline: float) -> None:
        """Open a new connection and send `data` on it (it never reached the gateway before)."""
        while True:
            if not self._may_reconnect(exc):
                raise self._closed_error(exc)
            self._reopen(exc, deadline)
            try:
                self._ws.send(data)
                return
            except ConnectionClosed as again:
                exc = again

    def _may_reconnect(self, exc: ConnectionClosed) -> bool:
        if self._closed_by_user or self.reconnect_timeout <= 0:
            return False
        return exc.rcvd is None or exc.rcvd.code in _RECONNECT_CODES

    def _reopen(self, cause: ConnectionClosed, deadline: float) -> None:
        """Open the session's stream again, with back-off until `deadline`, and check it answers.

        Raises:
            PlatformUnavailableError: no working connection before the deadline.
            SessionNotFoundError, SessionClosedError, PlatformError: the gateway refused the
                session (unknown, ended, or the token).
        """
        delay = _FIRST_DELAY_S
        last = "no attempt"
        while True:
            remaining = deadline - time.monotonic()
            if remaining > 0:
                try:
                    self._ws = self._checked_connection(remaining)
                    return
                except _Retry as retry:
                    last = str(retry)
            if time.monotonic() + delay > deadline:
                raise errors.PlatformUnavailableError(
                    f"session {self.session_id}: the stream closed ({_describe(cause)}) and could not be opened"
                    f" again within {self.reconnect_timeout:g} s: {last}",
                    session_id=self.session_id,
                )
            time.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY_S)

    def _direct_link(self, timeout: float) -> BlockingStepLink | None:
        """The session's step link, opened directly; None when the gateway's WebSocket must do.

        Raises:
            SessionClosedError: the gateway refused the ticket: the session ended.
        """
        if self._rest is None:
            return None
        try:
            return open_direct_link(self._rest, self.session_id, timeout)
        except DirectPathUnavailable as exc:
            log.debug("session %s steps through the gateway: %s", self.session_id, exc)
            return None

    def _checked_connection(self, remaining: float) -> BlockingStepLink | BlockingWebSocket:
        """A new connection that has answered a `spec` request (so the gateway or the env host
        serves the session): the direct path when it opens, else the gateway's WebSocket."""
        ws: BlockingStepLink | BlockingWebSocket | None = self._direct_link(remaining)
        try:
            if ws is None:
                ws = BlockingWebSocket(self._url, open_timeout=min(self.open_timeout, remaining))
        except InvalidStatus as exc:
            if exc.status_code < 500:
                raise self._refused(exc) from None
            raise _Retry(f"HTTP {exc.status_code}") from None
        except (InvalidHandshake, OSError) as exc:  # OSError: refused, reset, timed out
            raise _Retry(str(exc) or type(exc).__name__) from None
        self._next_id += 1
        probe = env_pb.EnvRequest(id=self._next_id, spec=env_pb.SpecRequest())
        timeout = remaining if self.read_timeout is None else min(self.read_timeout, remaining)
        try:
            ws.send(probe.SerializeToString())
            data = ws.recv(timeout)
        except ConnectionClosed as exc:
            if exc.rcvd is not None and is_session_close(exc.rcvd.code):
                raise self._closed_error(exc) from None
            raise _Retry(f"the new stream closed ({_describe(exc)})") from None
        except TimeoutError:
            ws.close()
            raise _Retry(f"no answer to a spec request within {timeout:.1f} s") from None
        try:
            answer = _parse_response(data) if data.__class__ is bytes else None
        except DecodeError:
            answer = None
        if answer is None or answer.id != probe.id:
            ws.close()
            raise _Retry("the new stream answered a spec request with something else")
        if answer.HasField("error"):
            ws.close()
            raise error_from_env(answer.error, f"session {self.session_id}", self.session_id)
        return ws

    def _refused(self, exc: InvalidStatus) -> errors.PlatformError:
        status = exc.status_code
        return errors.PlatformError(
            f"session {self.session_id}: the stream was refused with HTTP {status}",
            status=status,
            session_id=self.session_id,
        )

    def _closed_error(self, exc: ConnectionClosed) -> errors.PlatformError:
        sid = self.session_id
        if exc.rcvd is None and exc.sent is not None and exc.sent.code == 1000:
            return errors.SessionClosedError(f"session {sid}: the stream was closed by the client", session_id=sid)
        code = exc.rcvd.code if exc.rcvd else None
        reason = exc.rcvd.reason if exc.rcvd else "no close frame"
        return error_from_close(code, reason, sid)


def _describe(exc: ConnectionClosed) -> str:
    if exc.rcvd is None:
        return "no close frame"
    return f"{exc.rcvd.code}: {exc.rcvd.reason}" if exc.rcvd.reason else str(exc.rcvd.code)
