"""The gateway's step tickets: for its own step links, and for clients taking the direct path.

The direct path: the SDK asks `POST /v0/sessions/{id}/ticket` (the same auth as every route)
and opens the session's step link on its env host itself, so a step skips the gateway. The
gateway stays the path wherever clients cannot reach env hosts, and the default when the
direct path is not offered: no `PLATFORM_STEP_TICKET_SECRET`, `PLATFORM_DIRECT_STEPS=false`,
or a session whose env host has no step link address (409 saying which). Tickets are minted
and checked by `platform_bus.step_tickets`.
"""

from __future__ import annotations

from platform_bus.step_tickets import mint_ticket
from platform_contracts.limits import STEP_TICKET_TTL_S
from simulusion.control.v1 import control_pb2 as ctl

from platform_gateway.errors import ConflictError


class StepTickets:
    """Mints tickets with `secret` (None: none are minted and no direct path is offered)."""

    def __init__(self, secret: str | None, *, direct_steps: bool = True) -> None:
        self._secret = secret
        self._direct_steps = direct_steps

    def for_link(self, info: ctl.SessionInfo) -> str:
        """The ticket the gateway's own link to `info`'s env host sends ("" without a secret)."""
        if self._secret is None:
            return ""
        return mint_ticket(self._secret, info.id, info.host_id)

    def direct(self, info: ctl.SessionInfo) -> dict[str, object]:
        """A client's ticket for a running session (`StepTicketPublic`).

        Raises:
            ConflictError: the direct path is not offered for this session; the message says why.
        """
        why = self._not_offered(info)
        if why is not None:
            raise ConflictError(f"session {info.id} ({info.options.env_id}): no direct step path: {why}; "
                                f"step over the gateway (/v0/sessions/{info.id}/stream)")
        assert self._secret is not None
        return {"session_id": info.id, "address": info.step_address,
                "ticket": mint_ticket(self._secret, info.id, info.host_id), "expires_in_s": STEP_TICKET_TTL_S}

    def _not_offered(self, info: ctl.SessionInfo) -> str | None:
        if self._secret is None:
            return "the gateway has no PLATFORM_STEP_TICKET_SECRET"
        if not self._direct_steps:
            return "the gateway runs with PLATFORM_DIRECT_STEPS=false"
        if not info.step_address:
            return f"its env host {info.host_id or '?'} has no step link address"
        return None
