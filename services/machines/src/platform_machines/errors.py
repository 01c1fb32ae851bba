"""The machines service's errors: each carries the `ControlError` code its reply gets."""

from __future__ import annotations


class MachineError(Exception):
    """Base error; `code` is the reply's ControlError code, `field` the request field at fault."""

    code = "internal"

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class InvalidMachineError(MachineError):
    """A request the service cannot use: an unusable SSH command, a refused address, a machine
    that cannot be reached or refuses the platform's key when added."""

    code = "invalid_argument"


class MachineNotFoundError(MachineError):
    code = "not_found"


class MachineExistsError(MachineError):
    """The team has a machine at that host and port already."""

    code = "already_exists"


class HostKeyPendingError(MachineError):
    """accept-host-key on a machine whose host keys have not changed."""

    code = "failed_precondition"


class ExperimentNotFoundError(MachineError):
    code = "not_found"


class InvalidExperimentError(MachineError):
    """An experiment the platform cannot start: bad input, a repository that does not clone, a
    command that failed at once, a machine without that many GPUs."""

    code = "invalid_argument"


class MachineInUseError(MachineError):
    """Removing a machine whose experiments have not ended, without stopping them."""

    code = "failed_precondition"


class ExperimentUnavailableError(MachineError):
    """The machine could not be reached to start or cancel an experiment."""

    code = "unavailable"
