"""A machine behind NAT's tunnel state, as the `machines` table keeps it and people read it."""

from __future__ import annotations

import time

WAITING = "waiting"  # never connected since the machine was added
CONNECTED = "connected"
DOWN = "down"


def tunnel_summary(state: str, since: float) -> str:
    """"waiting for the machine to connect", "connected since ...", "tunnel down since ..."."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(since))
    if state == CONNECTED:
        return f"connected since {when}"
    if state == DOWN:
        return (f"tunnel down since {when}: the machine's tunnel command is not running or cannot reach the "
                "platform; while it runs it reconnects by itself")
    return "waiting for the machine to connect: run the command given when it was added, on the machine"
