"""Errors the SDK raises. Every one names the session and, where there is one, the step."""

from __future__ import annotations


class PlatformError(Exception):
    """Base of the SDK's errors. `status` is the HTTP status where one applies."""

    def __init__(self, message: str, *, status: int | None = None, session_id: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.session_id = session_id


class PlatformUnavailableError(PlatformError):
    """The platform (or one of its services) could not be reached."""


class OutcomeUnknownError(PlatformUnavailableError):
    """The connection was lost after a request was sent and before its answer came: whether
    the environment ran it is unknown (a request known not to have arrived is sent again on a
    new connection instead). The session goes on: the next call reconnects."""


class SessionNotFoundError(PlatformError):
    """An unknown session or environment id."""


class SessionClosedError(PlatformError):
    """The session was closed (by the user, the idle timeout, or a restart)."""


class InvalidRequestError(PlatformError, ValueError):
    """A request the platform cannot take as it is (e.g. a hold longer than the limit)."""


class InvalidActionError(InvalidRequestError):
    """An action outside the action space, or a malformed request."""


class SessionBusyError(PlatformError):
    """The session is still running a hold started with `wait=False`."""


class PlatformWarning(UserWarning):
    """Something the platform left out of a request without stopping it (e.g. agent data)."""


class EnvironmentCrashedError(PlatformError):
    """The environment instance died. `log_tail` holds the last lines of its log."""

    def __init__(self, message: str, *, log_tail: str = "", **kwargs: object) -> None:
        super().__init__(message + (f"\n--- instance log tail ---\n{log_tail}" if log_tail else ""), **kwargs)  # type: ignore[arg-type]
        self.log_tail = log_tail
