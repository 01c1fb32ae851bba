"""`PLATFORM_STEP_TICKET_SECRET` as a settings field, the same in the gateway and the env hosts.

`step_ticket_secret: TicketSecret = None` in a pydantic settings class: unset or empty means no
tickets; a secret too short for HS256 fails the settings with the reason (`secret_problem`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, SecretStr

from platform_bus.step_tickets import secret_problem


def _long_enough(value: SecretStr | None) -> SecretStr | None:
    problem = secret_problem(value.get_secret_value()) if value and value.get_secret_value() else None
    if problem:
        raise ValueError(problem)
    return value


TicketSecret = Annotated[SecretStr | None, AfterValidator(_long_enough)]


def secret_in_clear(value: SecretStr | None) -> str | None:
    """The secret's text; None when unset or empty (tickets are neither minted nor checked)."""
    return value.get_secret_value() or None if value else None
