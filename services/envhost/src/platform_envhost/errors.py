"""The env host's errors: one base class, each carrying the control-plane error code."""

from __future__ import annotations


class EnvHostError(Exception):
    """Base of the env host's errors.

    `code` is the ControlError code sent back on NATS: "invalid_argument", "not_found",
    "unavailable", "failed_precondition" or "internal".
    """

    code = "internal"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class ConfigError(EnvHostError):
    """Bad settings at start."""

    code = "invalid_argument"


class StartFailed(EnvHostError):
    """An instance could not be started (bad entry or kwargs, a factory that fails, capacity)."""


class InstanceGone(EnvHostError):
    """The stream to an instance broke: the instance died or was stopped mid-request."""

    code = "unavailable"


class EventsNotStored(EnvHostError):
    """A durable session's step events were not stored in JetStream in time: the step was taken
    but is not answered as if it were kept."""

    code = "unavailable"
