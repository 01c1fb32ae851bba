"""`PLATFORM_STEP_TICKET_SECRET` (or `PLATFORM_STEP_TICKET_SECRET_FILE`) as settings fields, the
same in the gateway and the env hosts.

`step_ticket_secret: TicketSecret = None` in a pydantic settings class: unset or empty means no
tickets; a secret too short for HS256 fails the settings with the reason (`secret_problem`).

`StepTicketSecretFields` holds both settings for a settings class to inherit (the gateway's and
the env host's do): the secret itself, or the path of a file holding it (a container's mounted
secret, Docker Compose's `./data/step-ticket-secret`), read once when the settings are made. Its
`ticket_secret` is the secret in clear, from whichever of the two is set; both set is an error,
as is a file that cannot be read or holds a secret too short.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, PrivateAttr, SecretStr, ValidationInfo, field_validator

from platform_bus.step_tickets import SECRET_VARIABLE, secret_problem

SECRET_FILE_VARIABLE = f"{SECRET_VARIABLE}_FILE"


def _long_enough(value: SecretStr | None) -> SecretStr | None:
    problem = secret_problem(value.get_secret_value()) if value and value.get_secret_value() else None
    if problem:
        raise ValueError(problem)
    return value


TicketSecret = Annotated[SecretStr | None, AfterValidator(_long_enough)]


def secret_in_clear(value: SecretStr | None) -> str | None:
    """The secret's text; None when unset or empty (tickets are neither minted nor checked)."""
    return value.get_secret_value() or None if value else None


def read_secret_file(path: Path) -> str:
    """The secret a file holds: its text less trailing whitespace (`openssl rand -hex 32 > file`
    ends it with a newline).

    Raises:
        ValueError: the file cannot be read, is empty, or holds a secret too short; one line
            naming the file (a settings error names the variable before it).
    """
    try:
        secret = path.read_text(encoding="utf-8").rstrip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValueError(f"cannot read {path} ({reason})") from None
    if not secret:
        raise ValueError(f"{path} is empty")
    problem = secret_problem(secret)
    if problem:
        raise ValueError(f"{path}: {problem}")
    return secret


class StepTicketSecretFields(BaseModel):
    """The step ticket secret's two settings, for a `PLATFORM_`-prefixed settings class to inherit.

    Attributes:
        step_ticket_secret: the secret itself (`PLATFORM_STEP_TICKET_SECRET`).
        step_ticket_secret_file: a file holding it (`PLATFORM_STEP_TICKET_SECRET_FILE`), checked
            when the settings are made (a setting error names it) and read then.
    """

    step_ticket_secret: TicketSecret = None
    step_ticket_secret_file: Path | None = None
    _secret_from_file: str | None = PrivateAttr(default=None)

    @field_validator("step_ticket_secret_file")
    @classmethod
    def _one_readable_secret(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None or not str(value):
            return None
        if secret_in_clear(info.data.get("step_ticket_secret")):
            raise ValueError(f"set {SECRET_VARIABLE} or {SECRET_FILE_VARIABLE}, not both")
        read_secret_file(value)
        return value

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        if self.step_ticket_secret_file is not None:
            self._secret_from_file = read_secret_file(self.step_ticket_secret_file)

    @property
    def ticket_secret(self) -> str | None:
        """The step ticket secret in clear (None: no tickets are minted or checked)."""
        return secret_in_clear(self.step_ticket_secret) or self._secret_from_file
