"""Step tickets: minted by the gateway, checked by env hosts (platform_bus.step_tickets)."""

from __future__ import annotations

import time

import jwt
import pytest
from platform_bus.step_tickets import (
    MIN_SECRET_BYTES,
    TicketRefusedError,
    mint_ticket,
    secret_problem,
    verify_ticket,
)
from platform_contracts.limits import STEP_TICKET_TTL_S
from simulusion.env.v1 import environment_pb2 as env_pb

SECRET = "s" * MIN_SECRET_BYTES
UNAUTHENTICATED, DENIED = env_pb.ERROR_CODE_UNAUTHENTICATED, env_pb.ERROR_CODE_PERMISSION_DENIED


def refusal(ticket: str, session_id: str = "s-1", host_id: str = "host-a", secret: str = SECRET) -> TicketRefusedError:
    with pytest.raises(TicketRefusedError) as caught:
        verify_ticket(secret, ticket, session_id, host_id)
    return caught.value


def test_a_fresh_ticket_opens_its_session_on_its_host() -> None:
    verify_ticket(SECRET, mint_ticket(SECRET, "s-1", "host-a"), "s-1", "host-a")


def test_the_ticket_carries_session_host_and_an_expiry_a_ttl_ahead() -> None:
    claims = jwt.decode(mint_ticket(SECRET, "s-1", "host-a", now=1000.0), SECRET, algorithms=["HS256"],
                        options={"verify_exp": False})
    assert claims == {"sub": "s-1", "envhost": "host-a", "iat": 1000, "exp": 1000 + STEP_TICKET_TTL_S}


def test_a_missing_ticket_is_refused_naming_the_route() -> None:
    exc = refusal("")
    assert exc.code == UNAUTHENTICATED
    assert "needs a ticket and none was given" in exc.message and "/v0/sessions/s-1/ticket" in exc.message


def test_an_expired_ticket_is_refused_as_expired() -> None:
    exc = refusal(mint_ticket(SECRET, "s-1", "host-a", now=time.time() - 3 * STEP_TICKET_TTL_S))
    assert exc.code == UNAUTHENTICATED
    assert "expired" in exc.message and "s ago" in exc.message


def test_a_ticket_signed_with_another_secret_is_refused_for_its_signature() -> None:
    exc = refusal(mint_ticket("o" * MIN_SECRET_BYTES, "s-1", "host-a"))
    assert exc.code == UNAUTHENTICATED
    assert "bad signature" in exc.message and "PLATFORM_STEP_TICKET_SECRET" in exc.message


def test_an_expired_forgery_is_refused_for_its_signature_not_its_age() -> None:
    forged = mint_ticket("o" * MIN_SECRET_BYTES, "s-1", "host-a", now=time.time() - 3 * STEP_TICKET_TTL_S)
    assert "bad signature" in refusal(forged).message


def test_a_ticket_of_another_session_is_denied_naming_it() -> None:
    exc = refusal(mint_ticket(SECRET, "s-2", "host-a"))
    assert exc.code == DENIED
    assert exc.message == "session s-1 on env host host-a: the step ticket is for session s-2, not this one"


def test_a_ticket_of_another_env_host_is_denied_naming_it() -> None:
    exc = refusal(mint_ticket(SECRET, "s-1", "host-b"))
    assert exc.code == DENIED
    assert "the step ticket is for env host host-b, not this one" in exc.message


def test_garbage_and_other_algorithms_are_refused() -> None:
    assert "not a valid ticket" in refusal("not-a-jwt").message
    unsigned = jwt.encode({"sub": "s-1", "envhost": "host-a", "exp": time.time() + 60}, None, algorithm="none")
    assert refusal(unsigned).code == UNAUTHENTICATED


def test_a_ticket_without_the_host_claim_is_refused_naming_the_claim() -> None:
    token = jwt.encode({"sub": "s-1", "exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    assert "lacks the 'envhost' claim" in refusal(token).message


def test_secrets_shorter_than_an_hs256_key_are_named() -> None:
    assert secret_problem(SECRET) is None
    problem = secret_problem("short")
    assert problem is not None and "at least 32 bytes" in problem
