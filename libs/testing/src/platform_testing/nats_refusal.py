"""Why a NATS server refuses a connect, asked until it says so.

The server writes its refusal and closes the connection at once, so a busy client may see the
connection reset before it reads the reason. `refusal` asks again (each try must be refused)
until the answer names the authorization violation, and returns the last answer."""

from __future__ import annotations

from typing import Any

import pytest
from platform_bus import NatsUnreachableError, connect

TRIES = 5


async def refusal(url: str, **kwargs: Any) -> str:
    reason = ""
    for _ in range(TRIES):
        with pytest.raises(NatsUnreachableError) as caught:
            await connect(url, name="intruder", timeout=3, **kwargs)
        reason = str(caught.value)
        if "Authorization Violation" in reason:
            break
    return reason
