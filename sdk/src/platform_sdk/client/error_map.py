"""One map from what the platform answers to the SDK's errors.

The platform says what went wrong in three ways: an HTTP status (REST), an `Error` in an
`EnvResponse` (the stream; the gateway answers the same codes over REST with the statuses of
`_STATUS_OF_CODE`) and a WebSocket close code (4000 + an HTTP status for the session's own
ends: 4401, 4404, 4410). Each is turned into a status here, and the status into one error class.
"""

from __future__ import annotations

from typing import Any

from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk import errors

_CLASS_OF_STATUS: dict[int, type[errors.PlatformError]] = {
    404: errors.SessionNotFoundError,
    410: errors.SessionClosedError,
    422: errors.InvalidActionError,
    502: errors.PlatformUnavailableError,
    503: errors.PlatformUnavailableError,
    504: errors.PlatformUnavailableError,
}
_STATUS_OF_CODE: dict[int, int] = {
    env_pb.ERROR_CODE_INVALID_ARGUMENT: 422,
    env_pb.ERROR_CODE_INVALID_ACTION: 422,
    env_pb.ERROR_CODE_NOT_FOUND: 404,
    env_pb.ERROR_CODE_FAILED_PRECONDITION: 409,
    env_pb.ERROR_CODE_INTERNAL: 500,
    env_pb.ERROR_CODE_UNIMPLEMENTED: 501,
    env_pb.ERROR_CODE_UNAVAILABLE: 410,
    env_pb.ERROR_CODE_UNAUTHENTICATED: 401,  # a step link's ticket refused
    env_pb.ERROR_CODE_PERMISSION_DENIED: 403,
    env_pb.ERROR_CODE_SESSION_CLOSED: 410,  # closed, not crashed: a SessionClosedError
}
# Close codes of a session's own end (the rest say the connection failed: PlatformUnavailableError).
_SESSION_CLOSE_CODES = frozenset({4401, 4404, 4410})


def error_class(status: int | None, *, crashed: bool = False) -> type[errors.PlatformError]:
    """The SDK's error for an HTTP status; `crashed`: a 410 whose instance died."""
    if crashed:
        return errors.EnvironmentCrashedError
    return _CLASS_OF_STATUS.get(status or 0, errors.PlatformError)


def error_from_http(status: int, body: Any) -> errors.PlatformError:
    """The error of a REST answer (`body`: its JSON, or {"detail": text})."""
    detail = body.get("detail", body) if isinstance(body, dict) else body
    message = detail if isinstance(detail, str) else str(detail)
    tail = body.get("log_tail", "") if isinstance(body, dict) else ""
    cls = error_class(status, crashed=status == 410 and bool(tail))
    if cls is errors.EnvironmentCrashedError:
        return errors.EnvironmentCrashedError(message, log_tail=tail, status=status)
    if cls is errors.PlatformError:
        message = f"HTTP {status}: {message}"
    return cls(message, status=status)


def error_from_env(error: env_pb.Error, where: str, session_id: str) -> errors.PlatformError:
    """The error of an `EnvResponse` (`where`: "session <id> (<env>), step 3" and the like)."""
    message = f"{where}: {error.message}"
    if error.code == env_pb.ERROR_CODE_UNAVAILABLE:
        return errors.EnvironmentCrashedError(message, log_tail=error.log_tail, session_id=session_id)
    return error_class(_STATUS_OF_CODE.get(error.code))(message, session_id=session_id)


def is_session_close(code: int | None) -> bool:
    """Whether a close code says the session itself ended or was refused (not the connection)."""
    return code in _SESSION_CLOSE_CODES


def error_from_close(code: int | None, reason: str, session_id: str) -> errors.PlatformError:
    """The error of a stream closed by the server with `code` (None: no close frame)."""
    where = f"session {session_id}"
    if code == 4401:
        return errors.PlatformError(f"{where}: the stream was refused: {reason}", status=401, session_id=session_id)
    if is_session_close(code):
        assert code is not None
        return error_class(code - 4000)(f"{where}: {reason}", session_id=session_id)
    return errors.PlatformUnavailableError(f"{where}: the stream closed ({code}: {reason})", session_id=session_id)
