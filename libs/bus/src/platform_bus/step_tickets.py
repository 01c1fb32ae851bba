"""Step tickets: what lets a client open an env host's step link itself (the direct path).

The gateway mints a ticket for a session (`POST /v0/sessions/{id}/ticket`, and for its own step
links); the env host that runs the session checks it in the `StepLinkOpen` (or the `ticket`
metadata of its gRPC stream). A ticket is an HS256 JWT signed with
`PLATFORM_STEP_TICKET_SECRET`, which the gateway and every env host share: `sub` the session
id, `envhost` the env host's id, `exp` a minute ahead (`limits.STEP_TICKET_TTL_S`): it is only
needed to open a link, which stays up after it expires. Mint and check live here together so
the two sides cannot disagree about the claims; the SDK never needs them.
"""

from __future__ import annotations

import time

import jwt
from platform_contracts.limits import STEP_TICKET_TTL_S
from simulusion.env.v1 import environment_pb2 as env_pb

SECRET_VARIABLE = "PLATFORM_STEP_TICKET_SECRET"
TICKET_METADATA = "ticket"  # the gRPC metadata key of the env host's `Environment/Connect`
MIN_SECRET_BYTES = 32  # RFC 7518 3.2: an HS256 key of at least the hash's size
_ALGORITHM = "HS256"
_HOST_CLAIM = "envhost"
_REQUIRED = ["exp", "sub", _HOST_CLAIM]


class TicketRefusedError(Exception):
    """A ticket that does not open the link; `code` is UNAUTHENTICATED (missing, malformed,
    forged, expired) or PERMISSION_DENIED (valid, but for another session or env host)."""

    def __init__(self, code: env_pb.ErrorCode.ValueType, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def secret_problem(secret: str) -> str | None:
    """What is wrong with a configured secret (None: nothing), for the services' settings."""
    if len(secret.encode()) < MIN_SECRET_BYTES:
        return f"{SECRET_VARIABLE} must be at least {MIN_SECRET_BYTES} bytes long (e.g. `openssl rand -hex 32`)"
    return None


def mint_ticket(secret: str, session_id: str, host_id: str, *, ttl_s: float = STEP_TICKET_TTL_S,
                now: float | None = None) -> str:
    """A ticket for `session_id` on env host `host_id`, valid `ttl_s` seconds from `now`."""
    issued = time.time() if now is None else now
    claims = {"sub": session_id, _HOST_CLAIM: host_id, "iat": int(issued), "exp": int(issued + ttl_s)}
    return jwt.encode(claims, secret, algorithm=_ALGORITHM)


def verify_ticket(secret: str, ticket: str, session_id: str, host_id: str) -> None:
    """Check that `ticket` opens `session_id`'s link on env host `host_id`.

    Raises:
        TicketRefusedError: naming exactly what is wrong.
    """
    unauthenticated, denied = env_pb.ERROR_CODE_UNAUTHENTICATED, env_pb.ERROR_CODE_PERMISSION_DENIED
    where = f"session {session_id} on env host {host_id}"
    if not ticket:
        raise TicketRefusedError(unauthenticated, f"{where}: the step link needs a ticket and none was given "
                                                  f"(ask the gateway: POST /v0/sessions/{session_id}/ticket)")
    try:
        claims = jwt.decode(ticket, secret, algorithms=[_ALGORITHM], options={"require": _REQUIRED})
    except jwt.ExpiredSignatureError:
        expired = _unverified_exp(ticket)
        when = f" {time.time() - expired:.0f} s ago" if expired is not None else ""
        raise TicketRefusedError(unauthenticated, f"{where}: the step ticket expired{when} (tickets last "
                                                  f"{STEP_TICKET_TTL_S} s: ask the gateway for a new one)") from None
    except jwt.InvalidSignatureError:
        raise TicketRefusedError(unauthenticated, f"{where}: the step ticket has a bad signature (not signed "
                                                  f"with this platform's {SECRET_VARIABLE})") from None
    except jwt.MissingRequiredClaimError as exc:
        raise TicketRefusedError(unauthenticated, f"{where}: the step ticket lacks the {exc.claim!r} claim") from None
    except jwt.InvalidTokenError as exc:
        raise TicketRefusedError(unauthenticated, f"{where}: the step ticket is not a valid ticket "
                                                  f"({type(exc).__name__}: {exc})") from None
    if claims["sub"] != session_id:
        raise TicketRefusedError(denied, f"{where}: the step ticket is for session {claims['sub']}, not this one")
    if claims[_HOST_CLAIM] != host_id:
        raise TicketRefusedError(denied, f"{where}: the step ticket is for env host {claims[_HOST_CLAIM]}, "
                                         "not this one")


def _unverified_exp(ticket: str) -> float | None:
    """The `exp` of a ticket already known to be signed right (for the message only)."""
    try:
        exp = jwt.decode(ticket, options={"verify_signature": False}).get("exp")
    except jwt.InvalidTokenError:
        return None
    return float(exp) if isinstance(exp, (int, float)) else None
