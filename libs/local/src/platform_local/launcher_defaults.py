"""What `platform-server` (and so `make run`) does ahead of users when not told otherwise: warm
pools (PLATFORM_POOLS) and previews made in the background (PLATFORM_WARM_PREVIEWS).

Warm pools.

A session that finds a warm instance of its environment needs no process start, so its first
frame comes in well under a second instead of the ~5 s a process start takes. The defaults
cover the catalog's classic control entries (CartPole twice: it is the quickstart's and the
docs' first environment, and a second Start right after the first still finds a warm one while
the pool refills) and the two Atari games the overview names, Pong and Breakout: nine small
processes of about 50 MB each, which a laptop carries easily.

The broker starts them in the background once it is up, one at a time, and they are not
sessions: their time before a session claims them counts to nobody's usage. Set PLATFORM_POOLS
to change them (e.g. ``PLATFORM_POOLS=cartpole=1``) or to an empty value for none.

Previews ahead. The gateway makes every catalog entry's missing preview in the background after
it starts, one at a time and only while no session is starting
(`platform_gateway.preview_warmer`), so the catalog page finds them made. Set
PLATFORM_WARM_PREVIEWS to env ids separated by commas, or to an empty value to make each one
only when the page first asks for it.

Tests and benchmarks that run `LocalPlatform` themselves get neither unless they ask.
"""

from __future__ import annotations

from collections.abc import Mapping

POOLS_VARIABLE = "PLATFORM_POOLS"
WARM_PREVIEWS_VARIABLE = "PLATFORM_WARM_PREVIEWS"
DEFAULT_WARM_PREVIEWS = "all"

DEFAULT_POOLS: dict[str, int] = {
    "cartpole": 2,
    "acrobot": 1,
    "mountaincar": 1,
    "mountaincar-continuous": 1,
    "pendulum": 1,
    "pong": 1,
    "breakout": 1,
}


def pools_text(pools: Mapping[str, int]) -> str:
    """`{"cartpole": 2, "pong": 1}` as PLATFORM_POOLS's ``cartpole=2,pong=1``."""
    return ",".join(f"{env_id}={count}" for env_id, count in pools.items())


def launcher_pools(env: Mapping[str, str]) -> str:
    """The PLATFORM_POOLS the launcher's services get: the user's when set (empty: none), else
    the defaults."""
    return env[POOLS_VARIABLE] if POOLS_VARIABLE in env else pools_text(DEFAULT_POOLS)


def launcher_warm_previews(env: Mapping[str, str]) -> str:
    """The PLATFORM_WARM_PREVIEWS the gateway gets: the user's when set, else every entry's."""
    return env.get(WARM_PREVIEWS_VARIABLE, DEFAULT_WARM_PREVIEWS)
