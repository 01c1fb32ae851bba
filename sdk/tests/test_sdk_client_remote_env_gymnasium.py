"""`RemoteEnv` and `RemoteVectorEnv` as Gymnasium's own tools see them: `env.env`, `env.spec`
(the catalog id and the environment server's `max_episode_steps`), `reset()` after `close()`
opening a new session with the same settings, `check_env` and `TimeLimit`.

The platform is a stand-in in this process: its REST client (create, close) and session stream
are replaced, and each session's requests are answered by an `EnvInstance` built as the
environment server builds it (`build_env`, the `endless` kwarg taken off), serialized and parsed
as on the wire. `tests/test_e2e_gymnasium_tools.py` does the same against a real platform.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import TimeLimit
from platform_sdk import errors
from platform_sdk.client import session as session_module
from platform_sdk.client.remote_env import RemoteEnv, SessionOpener
from platform_sdk.client.session_settings import SessionSettings
from platform_sdk.client.vector_env import RemoteVectorEnv
from platform_sdk.server.factory import build_env
from platform_sdk.server.instance import EnvInstance
from simulusion.env.v1 import environment_pb2 as env_pb

GYM_IDS = {"cartpole": "CartPole-v1", "pendulum": "Pendulum-v1"}


@dataclass
class StandIn:
    """The stand-in platform: each session's instance, and what was created and closed."""

    instances: dict[str, EnvInstance] = field(default_factory=dict)
    created: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (session, env, options)
    closed: list[str] = field(default_factory=list)

    def create(self, env_id: str, options: dict[str, Any]) -> dict[str, Any]:
        kwargs = dict(options.get("kwargs") or {})
        endless = kwargs.pop("endless", False)
        num_envs = options.get("num_envs") or 1
        if num_envs != 1:
            raise errors.InvalidRequestError("the stand-in hosts single sessions")
        env, gym_id = build_env(gym_id=GYM_IDS[env_id], kwargs=kwargs, endless=endless)
        session_id = f"s-{len(self.created)}"
        self.instances[session_id] = EnvInstance(env, gym_id, endless=endless)
        self.created.append((session_id, env_id, copy.deepcopy(options)))
        return {"id": session_id}


class _Rest:
    def __init__(self, standin: StandIn, url: str) -> None:
        self.standin, self.url = standin, url

    def create_session(self, env_id: str, options: dict[str, Any]) -> dict[str, Any]:
        return self.standin.create(env_id, options)

    def close_session(self, session_id: str) -> None:
        self.standin.closed.append(session_id)
        self.standin.instances[session_id].close()

    def close(self) -> None:
        pass


class _Stream:
    path = "gateway"

    def __init__(self, standin: StandIn, session_id: str) -> None:
        self.instance = standin.instances[session_id]

    def call(self, request: env_pb.EnvRequest, idempotent: bool = False) -> env_pb.EnvResponse:
        answer = self.instance.handle(env_pb.EnvRequest.FromString(request.SerializeToString()))
        return env_pb.EnvResponse.FromString(answer.SerializeToString())

    def close(self) -> None:
        pass


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    platform = StandIn()
    monkeypatch.setattr(session_module, "RestClient", lambda url, token: _Rest(platform, url))
    monkeypatch.setattr(session_module, "SessionStream",
                        lambda url, session_id, token, **options: _Stream(platform, session_id))
    yield platform


URL = "http://platform.test"


def connect(env_id: str = "cartpole", **options: Any) -> RemoteEnv:
    return RemoteEnv(env_id, url=URL, token="t0ken", **options)


# --- env.env and env.spec -----------------------------------------------------------------


def test_env_is_the_catalog_id_and_spec_has_the_environments_step_limit(standin: StandIn) -> None:
    with connect() as env:
        assert env.env == "cartpole"
        assert isinstance(env.spec, gym.envs.registration.EnvSpec)
        assert (env.spec.id, env.spec.max_episode_steps) == ("cartpole", 500)
        assert env.spec.kwargs == {}
    with connect("pendulum", kwargs={"g": 9.0}) as env:
        assert (env.spec.id, env.spec.max_episode_steps, env.spec.kwargs) == ("pendulum", 200, {"g": 9.0})
    with connect(kwargs={"max_episode_steps": 40}) as env:
        assert env.spec.max_episode_steps == 40


def test_an_endless_session_has_no_step_limit(standin: StandIn) -> None:
    with connect(kwargs={"endless": True}) as env:
        assert env.endless is True
        assert env.spec.max_episode_steps is None
        assert env.spec.kwargs == {"endless": True}


def test_the_spec_shows_no_token() -> None:
    opener = SessionOpener("cartpole", {}, SessionSettings(url=URL, token="s3cret"))
    spec = opener.spec(500)
    assert "s3cret" not in repr(spec) and "s3cret" not in str(spec.pprint(disable_print=True, include_entry_points=True, print_all=True))
    assert copy.deepcopy(spec) == spec


def test_making_the_spec_starts_a_session_with_the_same_settings(standin: StandIn) -> None:
    with connect(kwargs={"max_episode_steps": 40}, record=True, jpeg_quality=70) as env:
        made = gym.make(env.spec)
        try:
            assert isinstance(made, TimeLimit) and made.spec is not None and made.spec.max_episode_steps == 40
            made.reset(seed=0)
            assert made.unwrapped is not env and made.unwrapped.env == "cartpole"
        finally:
            made.close()
    (_, _, first), (_, env_id, second) = standin.created
    assert env_id == "cartpole" and second == first  # kwargs, record, jpeg quality


def test_a_render_mode_other_than_the_sessions_frames_is_refused(standin: StandIn) -> None:
    with connect() as env:
        assert isinstance(env.spec.entry_point, SessionOpener)
        with pytest.raises(errors.InvalidRequestError, match="render_mode 'human' is not available"):
            env.spec.entry_point(render_mode="human")
        made = env.spec.entry_point(render_mode="rgb_array")
        assert standin.created[-1][2]["kwargs"] == {}  # make's render_mode is not an environment kwarg
        made.close()


# --- close, then reset --------------------------------------------------------------------


def test_reset_after_close_opens_a_new_session_with_the_same_settings(standin: StandIn) -> None:
    env = connect(kwargs={"max_episode_steps": 40}, auto_reset=True)
    first = env.session_id
    observation, _ = env.reset(seed=3)
    env.step(0)
    env.close()
    assert standin.closed == [first]
    again, _ = env.reset(seed=3)
    assert env.session_id != first and env.session_id == "s-1"
    np.testing.assert_array_equal(again, observation)  # the same seed in the new session
    assert standin.created[1][1:] == standin.created[0][1:]
    _, _, _, truncated, _ = env.step(0)
    assert truncated is False
    env.close()
    assert standin.closed == [first, "s-1"]


def test_step_after_close_without_reset_raises_session_closed(standin: StandIn) -> None:
    env = connect()
    env.reset(seed=0)
    env.close()
    env.close()  # harmless
    with pytest.raises(errors.SessionClosedError, match=r"session s-0 \(cartpole\) is closed: reset\(\) opens a new "
                       "session with the same settings"):
        env.step(0)
    with pytest.raises(errors.SessionClosedError):
        env.render()
    assert standin.closed == ["s-0"]
    assert len(standin.created) == 1  # only reset opens again


# --- Gymnasium's tools --------------------------------------------------------------------


def test_gymnasiums_check_env_passes_with_its_render_and_close_checks(standin: StandIn) -> None:
    env = connect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)  # makes the spec with each render mode, and a new env closed twice
    assert not [str(w.message) for w in caught if "spec" in str(w.message)]
    assert len(standin.created) == 3 and standin.closed == ["s-1", "s-2"]
    env.close()


def test_time_limit_takes_its_steps_from_the_spec(standin: StandIn) -> None:
    with connect() as remote:
        env = TimeLimit(remote, max_episode_steps=remote.spec.max_episode_steps)
        assert env.spec is not None and (env.spec.id, env.spec.max_episode_steps) == ("cartpole", 500)
        short = TimeLimit(remote, max_episode_steps=5)
        assert short.spec is not None and short.spec.max_episode_steps == 5
        short.reset(seed=1)
        ends = [short.step(step % 2)[2:4] for step in range(5)]
        assert ends == [(False, False)] * 4 + [(False, True)]


# --- the vector session -------------------------------------------------------------------


def test_a_vector_session_has_env_and_spec_and_reopens_after_close(standin: StandIn) -> None:
    env = RemoteVectorEnv("cartpole", 1, url=URL, kwargs={"max_episode_steps": 30})
    assert env.env == "cartpole"
    assert env.spec is not None and (env.spec.id, env.spec.max_episode_steps) == ("cartpole", 30)
    env.reset(seed=0)
    env.step(np.array([1]))
    env.close()
    env.close()
    with pytest.raises(errors.SessionClosedError, match="is closed: reset"):
        env.step(np.array([1]))
    env.reset(seed=0)
    assert env.session_id == "s-1" and not env.closed
    env.step(np.array([1]))
    env.close()
    assert standin.closed == ["s-0", "s-1"]
