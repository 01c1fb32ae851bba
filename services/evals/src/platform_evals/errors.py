"""The evals service's errors: each carries the `ControlError` code its reply gets."""

from __future__ import annotations


class EvalError(Exception):
    """Base error; `code` is the reply's ControlError code, `field` the request field at fault."""

    code = "internal"

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class InvalidEvalError(EvalError):
    """A request the service cannot run: bad input, or a task the machine cannot run."""

    code = "invalid_argument"


class EvalNotFoundError(EvalError):
    code = "not_found"


class EvalUnavailableError(EvalError):
    """The machines service (or storage) did not answer."""

    code = "unavailable"
