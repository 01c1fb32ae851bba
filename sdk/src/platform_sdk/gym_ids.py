"""Gymnasium ids for the platform's environments: `simulusion/<catalog id>`.

Importing this module registers every built-in catalog id with Gymnasium, from a table made when
the SDK was built (`client/builtin_ids.py`): no network, nothing imported beyond Gymnasium's
registry. `register_catalog()` asks a platform for its catalog (`GET /v0/envs`) and registers
its other ids (its catalog.toml's entries) too. Gymnasium 1.x loads no plugins by entry point
(0.x's `gymnasium.envs` entry-point group and `load_plugin_envs` were removed in 1.0), so the
ids come with an import::

    import gymnasium as gym
    import platform_sdk.gym_ids  # (or gym.register_envs(platform_sdk.gym_ids))

    env = gym.make("simulusion/cartpole")             # one session (platform_sdk.connect)
    envs = gym.make_vec("simulusion/cartpole", 16)    # one batched session (platform_sdk.make_vec)

or without the import, Gymnasium's own "module:id" form: `gym.make("platform_sdk.gym_ids:simulusion/cartpole")`.

The keyword arguments of `gym.make`/`gym.make_vec` are split by name: the SDK's options, the
names of `SessionSettings`' fields (`url`, `token`, `record`, `life`, `direct`, ...) and, for
`make_vec`, `autoreset_mode`, go to `connect`/`make_vec`; `kwargs=` (a dict) and every other
name are the environment's kwargs, which the platform checks against the catalog entry's
options (an unknown one is `InvalidRequestError` naming it). An environment kwarg named like an
SDK option goes in `kwargs=`. `render_mode` is Gymnasium's: a session renders `rgb_array`.
`url` and `token` default to `PLATFORM_URL` and `PLATFORM_TOKEN`, read when the session opens.
`max_episode_steps` is the catalog's default (Gymnasium's TimeLimit then ends episodes where the
platform does); `gym.make`'s own `max_episode_steps` is a TimeLimit on your side, while in
`gym.make_vec` a value other than the registered one goes to the platform as the kwarg.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gymnasium.envs.registration import register, registry

from platform_sdk.client.builtin_ids import BUILTIN_IDS

if TYPE_CHECKING:
    import gymnasium as gym
    from gymnasium.vector import VectorEnv

NAMESPACE = "simulusion"
VECTOR_OPTIONS = frozenset({"autoreset_mode"})


def gym_id(env_id: str) -> str:
    """The Gymnasium id of a catalog id: "cartpole" -> "simulusion/cartpole"."""
    return f"{NAMESPACE}/{env_id}"


def sdk_option_names() -> frozenset[str]:
    """The names `connect` takes as its own options rather than as environment kwargs."""
    from platform_sdk.client.session_settings import SessionSettings

    return frozenset(field.name for field in dataclasses.fields(SessionSettings))


def split_kwargs(
    env_id: str, given: Mapping[str, Any], vector: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split `gym.make`'s keyword arguments into (environment kwargs, SDK options).

    SDK options: `SessionSettings`' field names (and `autoreset_mode` when `vector`);
    `kwargs`: a dict of environment kwargs, merged with every other name (a name given both ways
    is a TypeError).
    """
    options_names = sdk_option_names() | (VECTOR_OPTIONS if vector else frozenset())
    env_kwargs: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for name, value in given.items():
        if name == "kwargs":
            continue
        (options if name in options_names else env_kwargs)[name] = value
    explicit = given.get("kwargs")
    if explicit is not None:
        if not isinstance(explicit, Mapping):
            raise TypeError(f"{gym_id(env_id)}: kwargs must be a dict of the environment's kwargs, not "
                            f"{type(explicit).__name__}")
        both = sorted(set(explicit) & set(env_kwargs))
        if both:
            raise TypeError(f"{gym_id(env_id)}: {', '.join(both)} given both in kwargs= and as keyword arguments")
        env_kwargs.update(explicit)
    return env_kwargs, options


@dataclasses.dataclass(frozen=True)
class GymIdOpener:
    """The `entry_point` of `simulusion/<env_id>`: a session (`connect`) per `gym.make`.

    `max_episode_steps`: the registered limit; when there is none and the platform tells one,
    the session comes in Gymnasium's TimeLimit of that many steps (so `env.spec` says it).
    """

    env_id: str
    max_episode_steps: int | None = None

    def __call__(self, **given: Any) -> gym.Env[Any, Any]:
        from gymnasium.wrappers import TimeLimit

        from platform_sdk.client.remote_env import SessionOpener
        from platform_sdk.client.session_settings import SessionSettings

        env_kwargs, options = split_kwargs(self.env_id, given)
        env = SessionOpener(self.env_id, {}, SessionSettings(**options))(**env_kwargs)
        if self.max_episode_steps is None and env.max_episode_steps is not None:
            return TimeLimit(env, env.max_episode_steps)
        return env


@dataclasses.dataclass(frozen=True)
class GymIdVectorOpener:
    """The `vector_entry_point` of `simulusion/<env_id>`: one batched session (`make_vec`) of
    `num_envs` sub-environments per `gym.make_vec` (Gymnasium's default mode for an id that has
    one). Gymnasium passes the registered `max_episode_steps`; only another value goes to the
    platform (as the environment's `max_episode_steps` kwarg)."""

    env_id: str
    max_episode_steps: int | None = None

    def __call__(self, num_envs: int = 1, **given: Any) -> VectorEnv[Any, Any, Any]:
        from platform_sdk.client.vector_env import make_vec

        given = dict(given)
        limit = given.pop("max_episode_steps", None)
        given.pop("render_mode", None)  # a session renders rgb_array frames, nothing else to choose
        env_kwargs, options = split_kwargs(self.env_id, given, vector=True)
        if limit is not None and limit != self.max_episode_steps:
            env_kwargs["max_episode_steps"] = limit
        return make_vec(self.env_id, num_envs, kwargs=env_kwargs, **options)


def register_id(env_id: str, max_episode_steps: int | None) -> bool:
    """Register `simulusion/<env_id>` (again when its limit changed); False when it was there."""
    name = gym_id(env_id)
    known = registry.get(name)
    if known is not None:
        if known.entry_point == GymIdOpener(env_id, max_episode_steps):
            return False
        del registry[name]  # a catalog.toml entry replacing a built-in: no "overriding" warning
    register(
        id=name,
        entry_point=GymIdOpener(env_id, max_episode_steps),
        vector_entry_point=GymIdVectorOpener(env_id, max_episode_steps),
        max_episode_steps=max_episode_steps,
    )
    return True


def register_builtin() -> list[str]:
    """Register every built-in catalog id; returns their Gymnasium ids."""
    for env_id, limit in BUILTIN_IDS.items():
        register_id(env_id, limit)
    return [gym_id(env_id) for env_id in BUILTIN_IDS]


def register_catalog(url: str | None = None, token: str | None = None) -> list[str]:
    """Register the Gymnasium id of every entry of a platform's catalog (`GET /v0/envs`): the
    built-ins and its catalog.toml's. `url`, `token`: default `PLATFORM_URL`, `PLATFORM_TOKEN`.

    Returns the catalog's Gymnasium ids, in its order.

    Raises:
        PlatformUnavailableError: the platform cannot be reached; PlatformError: it refused.
    """
    from platform_sdk.client.rest import RestClient
    from platform_sdk.client.settings import resolve_token, resolve_url

    register_builtin()
    rest = RestClient(resolve_url(url), resolve_token(token), timeout=30.0)
    try:
        catalog = rest.request("GET", "/v0/envs")
    finally:
        rest.close()
    names = []
    for entry in catalog["data"]:
        limit = next((option.get("default") for option in entry.get("options", [])
                      if option.get("name") == "max_episode_steps"), None)
        register_id(entry["id"], limit if isinstance(limit, int) and not isinstance(limit, bool) else None)
        names.append(gym_id(entry["id"]))
    return names


register_builtin()
