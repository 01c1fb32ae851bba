"""The gateway's errors: one base class; each subclass carries its HTTP status and a code.

Routes never build HTTP errors themselves: `api.errors` turns any `GatewayError` into a
JSON response `{"detail": message, "code": code}` (plus `log_tail` when there is one, and
`field` when the error is about one request field), with the class's `headers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar


class GatewayError(Exception):
    """Base error of the gateway."""

    status: int = 500
    code: str = "internal"
    headers: ClassVar[Mapping[str, str]] = {}  # sent with the answer

    def __init__(self, message: str, *, log_tail: str = "", field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.log_tail = log_tail
        self.field = field  # the request field at fault ("kwargs.frameskip", "jpeg_quality"), "" if none


class InvalidArgumentError(GatewayError):
    status = 422
    code = "invalid_argument"


class PayloadTooLargeError(GatewayError):
    """A request body over its limit (an uploaded WAD over 20 MB)."""

    status = 413
    code = "too_large"


class InvalidActionError(GatewayError):
    status = 422
    code = "invalid_action"


class UnauthenticatedError(GatewayError):
    """The platform has an API token (PLATFORM_API_TOKEN) and the request lacks it or has another."""

    status = 401
    code = "unauthenticated"
    headers: ClassVar[Mapping[str, str]] = {"WWW-Authenticate": "Bearer"}


class PermissionDeniedError(GatewayError):
    """The caller is known but its role may not do this (a member creating an admin token)."""

    status = 403
    code = "permission_denied"


class NotFoundError(GatewayError):
    status = 404
    code = "not_found"


class SessionNotFoundError(NotFoundError):
    """The broker does not know the session."""


class ConflictError(GatewayError):
    """The command does not fit the session's state (e.g. a step before the first reset)."""

    status = 409
    code = "failed_precondition"


class SessionGoneError(GatewayError):
    """The session is closed, crashed, or its instance died (`log_tail` says why)."""

    status = 410
    code = "gone"


class UnavailableError(GatewayError):
    """A service the gateway needs (NATS, the broker, the recorder, an env host) does not answer."""

    status = 503
    code = "unavailable"


class StreamBrokenError(UnavailableError):
    """A session's stream or step link to its env host broke (EOF, reset, refused connection).

    Internal: `SessionStreams` turns it into the session's end (410) when the broker says it
    ended, else into a 503 naming the env host's address.
    """


class EnvTimeoutError(GatewayError):
    status = 504
    code = "timeout"


class UnimplementedError(GatewayError):
    status = 501
    code = "unimplemented"


class ResourceExhaustedError(GatewayError):
    """A team's quota is used up (the broker's `resource_exhausted`: its open sessions, its
    instance-hours this month); the message names the quota and its value."""

    status = 429
    code = "resource_exhausted"


class InternalError(GatewayError):
    status = 500
    code = "internal"


class AlreadyExistsError(GatewayError):
    """What the request would make exists already (a machine at that host and port)."""

    status = 409
    code = "already_exists"


_CONTROL_ERRORS: dict[str, type[GatewayError]] = {
    "invalid_argument": InvalidArgumentError,
    "already_exists": AlreadyExistsError,
    "not_found": NotFoundError,
    "unavailable": UnavailableError,
    "failed_precondition": ConflictError,
    "resource_exhausted": ResourceExhaustedError,
    "internal": InternalError,
}


def from_control_error(code: str, message: str, field: str = "") -> GatewayError:
    """The gateway error for a `ControlError` (or a recorder error) code, naming its `field`."""
    return _CONTROL_ERRORS.get(code, InternalError)(message, field=field)
