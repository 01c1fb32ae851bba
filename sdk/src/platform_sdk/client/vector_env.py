"""`make_vec()`: a vector session as a `gymnasium.vector.VectorEnv`, one round trip per step.

A vector session is one instance hosting `num_envs` sub-environments; `step` sends every
sub-environment's command in one `BatchRequest` and gets one `BatchResponse`. Each
sub-environment is still its own recorded stream (recording `<session id>-<i>`) with its own
snapshots. The per-sub-environment work is kept small: a Discrete step's request is joined from
cached serialized parts (`batch_requests`), and the observations are decoded together
(`observation_stack`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, create_empty_array, iterate
from platform_contracts.limits import MAX_NUM_ENVS
from platform_contracts.spaces import decode_value, space_from_proto, value_writer
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

from platform_sdk import errors
from platform_sdk.client.batch_requests import DiscreteStepRequests
from platform_sdk.client.observation_stack import ObservationStack
from platform_sdk.client.remote_env import SessionOpener
from platform_sdk.client.results import decode_frame, restored_info
from platform_sdk.client.session import PlatformSession
from platform_sdk.client.session_settings import SessionSettings
from platform_sdk.client.stream import SessionStream

if TYPE_CHECKING:
    from platform_sdk.client.sb3_vec import SB3VecFace


def make_vec(
    env_id: str,
    num_envs: int,
    url: str | None = None,
    kwargs: dict[str, Any] | None = None,
    token: str | None = None,
    record: bool = False,
    autoreset_mode: AutoresetMode | str | None = None,
    jpeg_quality: int | None = None,
    reconnect_timeout: float = 30.0,
    direct: bool | None = None,
    record_frames: bool = False,
    auto_reset: bool = False,
    life: str | None = None,
    frame_every: int | None = None,
    max_frames: int | None = None,
    durable: bool = False,
) -> RemoteVectorEnv:
    """Start a vector session of `num_envs` sub-environments of `env_id`.

    Args:
        env_id: a catalog id, e.g. "cartpole".
        num_envs: how many sub-environments (1 to `platform_contracts.limits.MAX_NUM_ENVS`).
        url, kwargs, token, record, jpeg_quality, reconnect_timeout, direct, record_frames, life,
            frame_every, max_frames, durable: as for `connect` (every sub-environment is recorded as its own
            recording; the platform refuses a life for a vector session, naming why).
        autoreset_mode: Gymnasium's autoreset semantics: NEXT_STEP (the default, as
            `SyncVectorEnv`), SAME_STEP (`final_obs`/`final_info` in the infos) or DISABLED.
        auto_reset: as for `connect`: an ended sub-environment resets in the same step, which is
            Gymnasium's SAME_STEP (any other `autoreset_mode` with it is an error).
    """
    mode = vector_autoreset_mode(env_id, autoreset_mode, auto_reset)
    settings = SessionSettings(url=url, token=token, record=record, jpeg_quality=jpeg_quality,
                               record_frames=record_frames, auto_reset=mode is AutoresetMode.SAME_STEP, life=life,
                               frame_every=frame_every, max_frames=max_frames, reconnect_timeout=reconnect_timeout,
                               direct=direct, durable=durable)
    return RemoteVectorEnv(env_id, num_envs, kwargs=kwargs, autoreset_mode=mode, settings=settings)


def vector_autoreset_mode(env_id: str, autoreset_mode: AutoresetMode | str | None, auto_reset: bool) -> AutoresetMode:
    """The vector session's autoreset mode: `autoreset_mode` (default NEXT_STEP), SAME_STEP with
    `auto_reset`.

    Raises:
        InvalidRequestError: `auto_reset` with another mode than SAME_STEP, or an unknown mode.
    """
    try:
        mode = AutoresetMode(autoreset_mode) if autoreset_mode is not None else None
    except ValueError:
        known = ", ".join(m.value for m in AutoresetMode)
        raise errors.InvalidRequestError(f"{env_id}: autoreset_mode must be one of {known}, not {autoreset_mode!r}") from None
    if auto_reset and mode not in (None, AutoresetMode.SAME_STEP):
        raise errors.InvalidRequestError(
            f"{env_id}: auto_reset=True is autoreset_mode SAME_STEP (an ended sub-environment resets in the same "
            f"step), not {mode.value}: give one of the two")
    return AutoresetMode.SAME_STEP if auto_reset else (mode or AutoresetMode.NEXT_STEP)


class RemoteVectorEnv(PlatformSession, VectorEnv):
    """A vector session: `step` moves all sub-environments in one round trip.

    Attributes:
        env: the catalog id.
        spec: the sub-environments' `EnvSpec` (as `RemoteEnv.spec`: the catalog id and
            `max_episode_steps`; making it starts a single session of the same environment).
        session_id: the current session (a new one after `close()` then `reset()`).
        settings: the session's settings (`SessionSettings`).
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        kwargs: dict[str, Any] | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        settings: SessionSettings | None = None,
        **options: Any,
    ) -> None:
        """A vector session of `num_envs` sub-environments of `env_id` with `kwargs`, made with
        `settings` (or `connect`'s options as keyword arguments)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or not 1 <= num_envs <= MAX_NUM_ENVS:
            raise errors.InvalidRequestError(f"{env_id}: num_envs must be between 1 and {MAX_NUM_ENVS}, not {num_envs!r}")
        if settings is not None and options:
            raise TypeError(f"RemoteVectorEnv takes settings or options ({', '.join(sorted(options))}), not both")
        self.settings = settings if settings is not None else SessionSettings(**options)
        self.num_envs = num_envs
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self._steps = 0
        self._create_fields = self.settings.create_fields(kwargs, num_envs)  # reset() after close() reopens
        self.env_id = env_id
        spec = self._opened()
        max_steps = spec.max_episode_steps if spec.HasField("max_episode_steps") else None
        opener = SessionOpener(env_id, dict(kwargs or {}), self.settings)
        self.spec = opener.spec(max_steps)
        self.single_observation_space = space_from_proto(spec.observation_space)
        self.single_action_space = space_from_proto(spec.action_space)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.render_mode = spec.render_mode or None
        self.metadata = {**dict_from_datamap(spec.metadata), "autoreset_mode": self.autoreset_mode}
        self._discrete_actions = isinstance(self.single_action_space, gym.spaces.Discrete)
        self._step_requests = DiscreteStepRequests(
            num_envs, auto_reset=self.autoreset_mode is AutoresetMode.SAME_STEP
        )
        self._write_action = value_writer(self.single_action_space)
        self._stack = ObservationStack(self.single_observation_space)
        observations = create_empty_array(self.single_observation_space, num_envs)
        assert observations is not None  # typed Optional by gymnasium; a space it cannot batch raises
        self._observations = observations
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terminations = np.zeros(num_envs, dtype=np.bool_)
        self._truncations = np.zeros(num_envs, dtype=np.bool_)
        self._autoreset_envs = np.zeros(num_envs, dtype=np.bool_)

    def _opened(self) -> env_pb.SpecResponse:
        """Open the session (`settings`, `_create_fields`) and check it hosts `num_envs` sub-environments."""
        spec = self._open(self.env_id, self.settings, self._create_fields)
        if max(spec.num_envs, 1) != self.num_envs:
            self.close()
            raise errors.PlatformError(
                f"session {self.session_id} ({self.env_id}) hosts {spec.num_envs} sub-environments, not "
                f"{self.num_envs}", session_id=self.session_id,
            )
        self.closed = False
        return spec

    @property
    def env(self) -> str:
        """The environment's catalog id."""
        return self.env_id

    # -- Gymnasium VectorEnv API --------------------------------------------------------------
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-environment (`seed`: None, an int s giving s, s+1, ..., or a list).
        After `close()` it first opens a new session with the same settings."""
        if self._closed:
            self._opened()
            self._autoreset_envs[:] = False
        if seed is None:
            seeds: Sequence[int | None] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise errors.InvalidRequestError(
                    f"session {self.session_id}: {len(seeds)} seeds for {self.num_envs} sub-environments"
                )
        batch = env_pb.BatchRequest()
        options_map = datamap_from_dict(options) if options else None
        for i, s in enumerate(seeds):
            sub = batch.requests.add(index=i)
            command = sub.request.reset
            command.SetInParent()
            if s is not None:
                command.seed = int(s)
            if options_map is not None:
                command.options.CopyFrom(options_map)
        responses = self._batch(env_pb.EnvRequest(batch=batch), "reset")
        self._steps = 0
        infos: dict[str, Any] = {}
        for i, response in enumerate(responses):
            result = response.reset
            if result.HasField("info"):
                infos = self._add_info(infos, dict_from_datamap(result.info), i)
        self._observations = self._stack.stack([r.reset.observation for r in responses], self._observations)
        self._terminations[:] = False
        self._truncations[:] = False
        self._autoreset_envs[:] = False
        return self._observations, infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-environment in one round trip (Gymnasium's autoreset semantics)."""
        resetting = self._autoreset_envs if self.autoreset_mode is AutoresetMode.NEXT_STEP else None
        if self._discrete_actions:
            request = self._step_requests.build(self._discrete_action_list(actions), resetting)
        else:
            request = self._step_request(actions, resetting)
        responses = self._batch(request, "step")
        self._steps += 1
        infos: dict[str, Any] = {}
        observations = []
        rewards = []
        terminations = []
        truncations = []
        space = self.single_observation_space
        add_info = self._add_info
        for i, response in enumerate(responses):
            if response.WhichOneof("result") == "reset":
                result: env_pb.ResetResponse | env_pb.StepResponse = response.reset
                rewards.append(0.0)
                terminations.append(False)
                truncations.append(False)
            else:
                result = response.step
                rewards.append(result.reward)
                terminations.append(result.terminated)
                truncations.append(result.truncated)
                if result.HasField("auto_reset"):
                    ended = result.auto_reset
                    infos = add_info(
                        infos,
                        {"final_obs": decode_value(ended.final_observation, space),
                         "final_info": dict_from_datamap(ended.final_info)},
                        i,
                    )
            observations.append(result.observation)
            if result.HasField("info"):  # an empty info is left out by the instance
                info = dict_from_datamap(result.info)
                if info:
                    infos = add_info(infos, info, i)
        self._observations = self._stack.stack(observations, self._observations)
        self._rewards[:] = rewards
        self._terminations[:] = terminations
        self._truncations[:] = truncations
        self._autoreset_envs = np.logical_or(self._terminations, self._truncations)
        return self._observations, self._rewards.copy(), self._terminations.copy(), self._truncations.copy(), infos

    def close_extras(self, **kwargs: Any) -> None:
        self._close_session()

    def _ready_stream(self) -> SessionStream:
        if self._closed:
            raise errors.SessionClosedError(
                f"session {getattr(self, 'session_id', '?')} ({self.env_id}) is closed: reset() opens a new session "
                "with the same settings", session_id=getattr(self, "session_id", None))
        return super()._ready_stream()

    def render(self) -> tuple[np.ndarray, ...]:
        """Every sub-environment's current frame as an RGB array, in one round trip (decoding
        JPEG frames needs the `frames` extra)."""
        batch = env_pb.BatchRequest()
        for i in range(self.num_envs):
            batch.requests.add(index=i).request.render.SetInParent()
        return tuple(decode_frame(response.render.frame)
                     for response in self._batch(env_pb.EnvRequest(batch=batch), "render"))

    def sb3(self) -> SB3VecFace:
        """This session with Stable-Baselines3's `VecEnv` interface, for SB3's algorithms
        (`PPO("MlpPolicy", env.sb3())`): an SB3 `VecEnv` when SB3 is installed
        (`platform_sdk.client.sb3_vec`). Needs autoreset mode SAME_STEP (`auto_reset=True`).

        Raises:
            ValueError: the session's autoreset mode is not SAME_STEP.
        """
        from platform_sdk.client.sb3_vec import as_sb3_vec_env

        return as_sb3_vec_env(self)

    # -- snapshots of every sub-environment ---------------------------------------------------
    def snapshot(self) -> list[str]:
        """Snapshot every sub-environment; returns one handle per sub-environment."""
        batch = env_pb.BatchRequest()
        for i in range(self.num_envs):
            batch.requests.add(index=i).request.snapshot.SetInParent()
        return [response.snapshot.handle for response in self._batch(env_pb.EnvRequest(batch=batch), "snapshot")]

    def restore(self, handles: Sequence[str]) -> tuple[Any, dict[str, Any]]:
        """Return every sub-environment to its snapshot (a list from `snapshot`).

        Returns the observations and infos (Gymnasium's vector form); `infos["restore_s"]` holds
        each sub-environment's seconds to restore, measured by the environment server (one after
        another in the one instance; left out by an older server).
        """
        if len(handles) != self.num_envs:
            raise errors.InvalidRequestError(
                f"session {self.session_id}: {len(handles)} handles for {self.num_envs} sub-environments"
            )
        batch = env_pb.BatchRequest()
        for i, handle in enumerate(handles):
            batch.requests.add(index=i).request.restore.handle = handle
        infos: dict[str, Any] = {}
        responses = self._batch(env_pb.EnvRequest(batch=batch), "restore")
        for i, response in enumerate(responses):
            infos = self._add_info(infos, restored_info(response.restore), i)
        self._observations = self._stack.stack([r.restore.observation for r in responses], self._observations)
        self._autoreset_envs[:] = False
        return self._observations, infos

    # -- plumbing -----------------------------------------------------------------------------
    def _discrete_action_list(self, actions: Any) -> list[int]:
        flat = np.asarray(actions).reshape(-1)
        if flat.shape != (self.num_envs,):
            raise errors.InvalidActionError(
                f"session {self.session_id} ({self.env_id}): {flat.size} actions for {self.num_envs} "
                "sub-environments", session_id=self.session_id,
            )
        if flat.dtype.kind in "iu":
            return flat.tolist()
        return [int(action) for action in flat.tolist()]

    def _step_request(self, actions: Any, resetting: np.ndarray | None) -> env_pb.EnvRequest:
        """The step's request for actions of a space other than Discrete, built field by field."""
        request = env_pb.EnvRequest()
        add = request.batch.requests.add
        same_step = self.autoreset_mode is AutoresetMode.SAME_STEP
        for i, action in enumerate(iterate(self.action_space, actions)):
            sub = add(index=i).request
            if resetting is not None and resetting[i]:
                sub.reset.SetInParent()
                continue
            command = sub.step
            self._encode_into(command.action, action, i)
            if same_step:
                command.auto_reset = True
        return request

    def _encode_into(self, value: pb.Value, action: Any, index: int) -> None:
        try:
            self._write_action(value, action)
        except (ValueError, TypeError) as exc:
            raise errors.InvalidActionError(
                f"session {self.session_id} ({self.env_id}), sub-environment {index}: {exc}",
                session_id=self.session_id,
            ) from None

    def _batch(self, request: env_pb.EnvRequest, what: str) -> Sequence[env_pb.EnvResponse]:
        asked = request.batch.requests
        responses = self._call(request, what).batch.responses
        if len(responses) != len(asked):
            raise errors.PlatformError(
                f"session {self.session_id} ({self.env_id}), {what}: {len(responses)} answers for "
                f"{len(asked)} sub-environments", session_id=self.session_id,
            )
        for position, answer in enumerate(responses):
            if answer.HasField("error"):
                raise self._error(answer.error, f"{what} of sub-environment {asked[position].index}")
        return responses

    def _where(self, what: str) -> str:
        if what.startswith("step"):  # "step 12", "step 12 of sub-environment 3"
            what = f"step {self._steps + 1}{what[len('step'):]}"
        return super()._where(what)
