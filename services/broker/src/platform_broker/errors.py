"""The broker's errors: one base class, with the ControlError code each maps to."""

from __future__ import annotations


class BrokerError(Exception):
    """Base error of the broker.

    Attributes:
        code: the `ControlError.code` a reply carries for it ("invalid_argument", "not_found",
            "unavailable", "failed_precondition", "resource_exhausted", "internal").
        field: the request field at fault (`ControlError.field`): "kwargs.<name>" for a session
            kwarg, else the option's name (e.g. "jpeg_quality"); "" when not about one field.
    """

    code = "internal"

    def __init__(self, message: str, code: str | None = None, *, field: str = "") -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.field = field

    @property
    def message(self) -> str:
        return str(self)


class ConfigError(BrokerError):
    """Bad settings or a bad catalog file: the broker does not start."""

    code = "invalid_argument"


class NotFoundError(BrokerError):
    code = "not_found"


class InvalidArgumentError(BrokerError):
    code = "invalid_argument"


class UnavailableError(BrokerError):
    code = "unavailable"


class FailedPreconditionError(BrokerError):
    """The request does not fit the current state (e.g. a life another open session is recording)."""

    code = "failed_precondition"


class ResourceExhaustedError(BrokerError):
    """A team's quota is used up (its open sessions, its instance-hours this month): the message
    names the team, the quota and its value."""

    code = "resource_exhausted"
