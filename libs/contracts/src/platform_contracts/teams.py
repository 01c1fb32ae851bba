"""Teams: who owns a resource (PLATFORM_MODE=managed).

A resource's team is written where it is made (`SessionOptions.team`, a saved snapshot's `team`,
a recording's meta.json `team`, ...). An empty team is the one team of a self-hosted platform,
and of everything made before teams existed: `DEFAULT_TEAM`.
"""

from __future__ import annotations

DEFAULT_TEAM = "default"


def owning_team(team: str | None) -> str:
    """The team a resource with this recorded `team` belongs to (empty or None: `DEFAULT_TEAM`)."""
    return team or DEFAULT_TEAM
