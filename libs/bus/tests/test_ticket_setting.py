"""The step ticket secret's settings: the secret, or a file holding it (platform_bus.ticket_setting)."""

from __future__ import annotations

from pathlib import Path

import pytest
from platform_bus.step_tickets import MIN_SECRET_BYTES
from platform_bus.ticket_setting import StepTicketSecretFields
from pydantic import ValidationError

SECRET = "k" * MIN_SECRET_BYTES


def refused(**fields: object) -> str:
    with pytest.raises(ValidationError) as caught:
        StepTicketSecretFields(**fields)  # type: ignore[arg-type]
    error = caught.value.errors()[0]
    assert error["loc"] == ("step_ticket_secret_file",) or error["loc"] == ("step_ticket_secret",)
    return str(error["msg"])


def test_the_secret_is_read_from_its_file_less_the_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "step-ticket-secret"
    path.write_text(SECRET + "\n")
    assert StepTicketSecretFields(step_ticket_secret_file=path).ticket_secret == SECRET


def test_the_secret_itself_still_works_and_nothing_set_means_no_tickets() -> None:
    assert StepTicketSecretFields(step_ticket_secret=SECRET).ticket_secret == SECRET  # type: ignore[arg-type]
    assert StepTicketSecretFields().ticket_secret is None
    assert StepTicketSecretFields(step_ticket_secret="").ticket_secret is None  # type: ignore[arg-type]


def test_the_file_is_read_once_when_the_settings_are_made(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text(SECRET)
    fields = StepTicketSecretFields(step_ticket_secret_file=path)
    path.write_text("r" * MIN_SECRET_BYTES)  # rotated on disk: a restart picks it up, not a running service
    assert fields.ticket_secret == SECRET


def test_a_missing_file_is_refused_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    assert refused(step_ticket_secret_file=missing) == f"Value error, cannot read {missing} (No such file or directory)"


def test_an_empty_file_and_a_short_secret_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert refused(step_ticket_secret_file=empty) == f"Value error, {empty} is empty"
    short = tmp_path / "short"
    short.write_text("k" * (MIN_SECRET_BYTES - 1))
    message = refused(step_ticket_secret_file=short)
    assert message.startswith(f"Value error, {short}: PLATFORM_STEP_TICKET_SECRET must be at least {MIN_SECRET_BYTES}")


def test_the_secret_and_its_file_together_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text(SECRET)
    message = refused(step_ticket_secret=SECRET, step_ticket_secret_file=path)
    assert message == ("Value error, set PLATFORM_STEP_TICKET_SECRET or PLATFORM_STEP_TICKET_SECRET_FILE, "
                       "not both")
