"""Gymnasium's CartPole-v1 as an OpenEnv environment, written the way OpenEnv's template and
docs show (an `Environment` subclass, pydantic `Action`/`Observation` models, `create_app`,
an `EnvClient` subclass), for bench/peer_rate.py. Imported only under the scratch venv that has
`openenv-core`; served by uvicorn as OpenEnv serves its environments:

    python -m uvicorn openenv_cartpole:app --app-dir bench/clients --port 8001
"""

from __future__ import annotations

import os
from typing import Any
from uuid import uuid4

import gymnasium as gym
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class CartPoleAction(Action):
    action: int = Field(..., description="0: push left, 1: push right")


class CartPoleObservation(Observation):
    state: list[float] = Field(default_factory=list, description="cart position, velocity, pole angle, velocity")


class CartPoleEnvironment(Environment):
    """One Gymnasium CartPole-v1 per WebSocket session."""

    SUPPORTS_CONCURRENT_SESSIONS: bool = True

    def __init__(self) -> None:
        super().__init__()
        self.env = gym.make("CartPole-v1")
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> CartPoleObservation:
        obs, _ = self.env.reset(seed=seed)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return CartPoleObservation(state=obs.tolist(), done=False, reward=0.0)

    def step(self, action: CartPoleAction, timeout_s: float | None = None, **kwargs: Any) -> CartPoleObservation:  # type: ignore[override]
        obs, reward, terminated, truncated, _ = self.env.step(action.action)
        self._state.step_count += 1
        return CartPoleObservation(state=obs.tolist(), done=bool(terminated or truncated), reward=float(reward))

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        self.env.close()


class CartPoleClient(EnvClient[CartPoleAction, CartPoleObservation, State]):
    def _step_payload(self, action: CartPoleAction) -> dict[str, Any]:
        return {"action": action.action}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CartPoleObservation]:
        observation = CartPoleObservation(state=payload.get("observation", {}).get("state", []),
                                          done=payload.get("done", False), reward=payload.get("reward"))
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(episode_id=payload.get("episode_id"), step_count=payload.get("step_count", 0))


app = create_app(CartPoleEnvironment, CartPoleAction, CartPoleObservation, env_name="cartpole",
                 max_concurrent_envs=int(os.environ.get("BENCH_OPENENV_MAX_SESSIONS", "128")))
