"""The gateway's step tickets (platform_gateway.step_tickets): its own links' tickets, and the
direct path's, offered only with a secret, PLATFORM_DIRECT_STEPS and a step link address."""

from __future__ import annotations

import pytest
from platform_bus.step_tickets import verify_ticket
from platform_gateway.config import Settings
from platform_gateway.errors import ConflictError
from platform_gateway.step_tickets import StepTickets
from pydantic import ValidationError
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.session.v1.options_pb2 import SessionOptions

SECRET = "gateway-test-secret-0123456789abcdefgh"


def info(step_address: str = "10.0.0.7:4100") -> ctl.SessionInfo:
    return ctl.SessionInfo(id="s-1", host_id="host-a", step_address=step_address,
                           state=ctl.SESSION_STATE_RUNNING, options=SessionOptions(env_id="cartpole"))


def test_a_direct_ticket_names_the_step_address_and_opens_the_session_on_its_host() -> None:
    answer = StepTickets(SECRET).direct(info())
    assert answer["session_id"] == "s-1" and answer["address"] == "10.0.0.7:4100" and answer["expires_in_s"] == 60
    ticket = answer["ticket"]
    assert isinstance(ticket, str)
    verify_ticket(SECRET, ticket, "s-1", "host-a")


def test_the_gateway_own_links_carry_a_ticket_only_with_a_secret() -> None:
    verify_ticket(SECRET, StepTickets(SECRET, direct_steps=False).for_link(info()), "s-1", "host-a")
    assert StepTickets(None).for_link(info()) == ""


@pytest.mark.parametrize(("tickets", "session", "why"), [
    (StepTickets(None), info(), "the gateway has no PLATFORM_STEP_TICKET_SECRET"),
    (StepTickets(SECRET, direct_steps=False), info(), "the gateway runs with PLATFORM_DIRECT_STEPS=false"),
    (StepTickets(SECRET), info(step_address=""), "its env host host-a has no step link address"),
], ids=["no secret", "turned off", "no step address"])
def test_a_direct_path_not_offered_is_a_409_saying_why(tickets: StepTickets, session: ctl.SessionInfo,
                                                        why: str) -> None:
    with pytest.raises(ConflictError) as refused:
        tickets.direct(session)
    assert refused.value.status == 409
    assert refused.value.message == (f"session s-1 (cartpole): no direct step path: {why}; "
                                     "step over the gateway (/v0/sessions/s-1/stream)")


def test_settings_take_the_secret_and_refuse_a_short_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLATFORM_STEP_TICKET_SECRET", SECRET)
    monkeypatch.setenv("PLATFORM_DIRECT_STEPS", "false")
    settings = Settings()
    assert settings.ticket_secret == SECRET and settings.direct_steps is False
    assert SECRET not in repr(settings)
    monkeypatch.setenv("PLATFORM_STEP_TICKET_SECRET", "")
    assert Settings().ticket_secret is None
    monkeypatch.setenv("PLATFORM_STEP_TICKET_SECRET", "short")
    with pytest.raises(ValidationError, match="at least 32 bytes"):
        Settings()
