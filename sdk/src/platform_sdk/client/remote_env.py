"""`connect()`: a platform session as a `gymnasium.Env`.

Like a local Gymnasium environment, a `RemoteEnv` has an `EnvSpec` (`env.spec`: the catalog
id and the environment's `max_episode_steps`, from the environment server), and `reset()`
after `close()` starts again: a new session with the same settings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec
from platform_contracts.spaces import decode_value, encode_value, space_from_proto
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk import errors
from platform_sdk.client.holds import Held, PendingHold, check_hold, held_from
from platform_sdk.client.results import decode_frame, restored_info, step_info, warn_all
from platform_sdk.client.session import PlatformSession
from platform_sdk.client.session_settings import SessionSettings
from platform_sdk.client.stream import SessionStream
from platform_sdk.labels import labelled

StepOutcome = tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]


def connect(
    env_id: str,
    url: str | None = None,
    kwargs: dict[str, Any] | None = None,
    token: str | None = None,
    record: bool = False,
    jpeg_quality: int | None = None,
    record_frames: bool = False,
    auto_reset: bool = False,
    life: str | None = None,
    frame_every: int | None = None,
    max_frames: int | None = None,
    reconnect_timeout: float = 30.0,
    direct: bool | None = None,
    durable: bool = False,
) -> RemoteEnv:
    """Start a session of `env_id` on the platform and return it as a Gymnasium environment.

    Args:
        env_id: a catalog id (`GET /v0/envs` lists them), e.g. "cartpole".
        url: the platform; default `PLATFORM_URL`, then http://127.0.0.1:8000.
        kwargs: keyword arguments for the environment.
        token: API token; default `PLATFORM_TOKEN`.
        record: record every step of the session.
        jpeg_quality: JPEG quality (1-100) of the session's frames; default 90.
        record_frames: with `record`, also keep the frame of every reset and step.
        auto_reset: when a step ends the episode, the environment resets at once: the step
            returns the next episode's first observation, with `final_obs` and `final_info` in
            its info (terminated/truncated as the environment said).
        life: with `record`, append the recording to this life (1-64 letters, digits, `_`, `.`,
            `-`): a recording that goes on across sessions and restarts, its episodes' `life_start`
            counted over the whole life. One session at a time writes a life: while another
            records it, this raises `PlatformError` (status 409) naming that session.
        frame_every: with `life`, keep one frame in N (turns on `record_frames`).
        max_frames: with `life`, never keep more than M frames over the whole life; the spacing
            doubles each time a twentieth of M is used (turns on `record_frames`).
        reconnect_timeout: seconds spent opening the stream again when the connection is lost
            (the gateway restarted): a request known not to have arrived is then sent again, one
            that may have run raises `OutcomeUnknownError`; 0 never reconnects.
        direct: step over the env host's step link directly, skipping the gateway, when the
            platform offers it and the env host can be reached (else, silently, over the
            gateway); False always steps over the gateway. Default: `PLATFORM_DIRECT`
            (`0`/`false` turn it off), else on. `env.step_path` says which one is used.
        durable: with `record`, each step is answered only once its event is stored, so no step
            you were answered for is lost if the env host dies (by default events are gathered
            for up to 50 ms first); slower, see bench/record_overhead.py. The platform may make
            every recorded session durable (PLATFORM_DURABLE_STEPS).
    """
    settings = SessionSettings(url=url, token=token, record=record, jpeg_quality=jpeg_quality,
                               record_frames=record_frames, auto_reset=auto_reset, life=life, frame_every=frame_every,
                               max_frames=max_frames, reconnect_timeout=reconnect_timeout, direct=direct,
                               durable=durable)
    return RemoteEnv(env_id, kwargs=kwargs, settings=settings)


class RemoteEnv(PlatformSession, gym.Env):
    """A session on the platform. Steps travel over one WebSocket as protobuf messages.

    Attributes:
        env: the catalog id (as given to `connect`).
        spec: a Gymnasium `EnvSpec`: `id` the catalog id, `max_episode_steps` the episode
            limit the environment truncates at (None without one, e.g. endless sessions),
            `kwargs` the environment's kwargs; `gymnasium.make(env.spec)` starts another
            session like this one (`SessionOpener`).
        session_id: the current session (a new one after `close()` then `reset()`).
    """

    def __init__(
        self,
        env_id: str,
        kwargs: dict[str, Any] | None = None,
        settings: SessionSettings | None = None,
        **options: Any,
    ) -> None:
        """A session of `env_id` with `kwargs`, made with `settings` (or the same options as
        `connect`'s keyword arguments; an unknown one is a TypeError naming it)."""
        if settings is not None and options:
            raise TypeError(f"RemoteEnv takes settings or options ({', '.join(sorted(options))}), not both")
        settings = settings if settings is not None else SessionSettings(**options)
        self.auto_reset = settings.auto_reset
        self._pending: PendingHold | None = None
        self.resumed: tuple[Any, dict[str, Any]] | None = None  # set by platform_sdk.resume
        self._steps = 0
        self.settings = settings
        self._create_fields = settings.create_fields(kwargs)  # reset() after close() reopens with them
        self._take_spec(self._open(env_id, settings, self._create_fields))
        opener = SessionOpener(env_id, dict(kwargs or {}), settings)
        self.spec = opener.spec(self.max_episode_steps)

    def _take_spec(self, spec: env_pb.SpecResponse) -> None:
        self.observation_space = space_from_proto(spec.observation_space)
        self.action_space = space_from_proto(spec.action_space)
        self.render_mode = spec.render_mode or None
        self.metadata = {**dict_from_datamap(spec.metadata), "render_modes": ["rgb_array"]}
        if self.render_mode:
            self.metadata["render_modes"] = sorted({"rgb_array", self.render_mode})
        self._labels = [(label.name, label.start, label.stop) for label in spec.observation_labels]
        self.endless = spec.endless
        self.max_episode_steps: int | None = spec.max_episode_steps if spec.HasField("max_episode_steps") else None

    @property
    def env(self) -> str:
        """The environment's catalog id."""
        return self.env_id

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Gymnasium's reset. After `close()` it first opens a new session with the same settings
        (environment, kwargs, recording, url, token, ...): `session_id` changes."""
        super().reset(seed=seed)
        if self._closed:
            self._reopen()
        command = env_pb.ResetRequest(options=datamap_from_dict(options))
        if seed is not None:
            command.seed = int(seed)
        result = self._call(env_pb.EnvRequest(reset=command), "reset").reset
        self._steps = 0
        return decode_value(result.observation, self.observation_space), dict_from_datamap(result.info)

    def step(
        self, action: Any, agent: dict[str, Any] | None = None
    ) -> StepOutcome:
        """Gymnasium's step. `agent`: data about the decision, recorded with the step (finite
        numbers, booleans, lists of up to `MAX_AGENT_LIST_LENGTH` numbers, at most
        `MAX_AGENT_NAMES_PER_STEP` names, see `platform_contracts.limits`; `compute_s` is the
        wall time spent deciding, `refused` 1 when the agent declined to answer). A value that
        breaks a rule is left out with a PlatformWarning naming the rule."""
        return self._step_answer(self._call(self._step_request(action, agent), "step"))

    def _begin_step(self, action: Any, agent: dict[str, Any] | None = None) -> Callable[[], StepOutcome]:
        """Send a step without waiting for its answer; the returned function waits for it and
        returns what `step` would. The agent loop steps several sessions at once this way (no
        other request may go to this session before that function is called)."""
        request = self._step_request(action, agent)
        stream = self._ready_stream()
        self._traced(request)
        request_id = stream.send(request)

        def answer() -> StepOutcome:
            try:
                response = stream.receive(request_id, request)
            except errors.OutcomeUnknownError as exc:
                raise self._outcome_unknown(exc, "step") from None
            if response.HasField("error"):
                raise self._error(response.error, "step")
            return self._step_answer(response)

        return answer

    def _step_request(self, action: Any, agent: dict[str, Any] | None) -> env_pb.EnvRequest:
        request = env_pb.EnvRequest()
        command = request.step
        try:
            if action.__class__ is int and self.action_space.__class__ is gym.spaces.Discrete:
                command.action.discrete = action  # the common case, without encode_value's checks
            else:
                command.action.CopyFrom(encode_value(action, self.action_space))
        except (ValueError, TypeError) as exc:
            raise errors.InvalidActionError(
                f"session {self.session_id} ({self.env_id}), step {self._steps + 1}: {exc}", session_id=self.session_id
            ) from None
        if agent:
            command.agent.CopyFrom(datamap_from_dict(agent))
        if self.auto_reset:
            command.auto_reset = True
        return request

    def _step_answer(self, response: env_pb.EnvResponse) -> StepOutcome:
        result = response.step
        self._steps += 1
        if response.warnings:
            warn_all(response.warnings, f"session {self.session_id} ({self.env_id}), step {self._steps}")
        if result.HasField("auto_reset"):
            return (
                decode_value(result.observation, self.observation_space),
                result.reward,
                result.terminated,
                result.truncated,
                step_info(result, self.observation_space),
            )
        return (
            decode_value(result.observation, self.observation_space),
            result.reward,
            result.terminated,
            result.truncated,
            dict_from_datamap(result.info),
        )

    def render(self) -> np.ndarray:
        frame = self._call(env_pb.EnvRequest(render=env_pb.RenderRequest()), "render").render.frame
        return decode_frame(frame)

    def render_jpeg(self) -> bytes:
        """The current frame as the JPEG the environment sent (the session's `jpeg_quality`),
        undecoded: for passing it on (to a model, a file) without the `frames` extra."""
        frame = self._call(env_pb.EnvRequest(render=env_pb.RenderRequest()), "render").render.frame
        if frame.encoding != "jpeg":
            raise errors.PlatformError(f"{self._where('render')}: the frame came as {frame.encoding!r}, not JPEG")
        return bytes(frame.data)

    def close(self) -> None:
        """End the session (harmless when it has ended). `reset()` then opens a new one."""
        self._close_session()

    # -- Platform extras ---------------------------------------------------------------------
    def hold(
        self, action: Any, steps: int, *, frames: bool = True, wait: bool = True, agent: dict[str, Any] | None = None
    ) -> Held | PendingHold:
        """Repeat `action` for `steps` steps in one uninterrupted stretch (one round trip).

        It stops early when the episode ends. Up to `MAX_HOLD_STEPS_WITH_FRAMES` steps with
        frames (a JPEG after every step), up to `MAX_HOLD_STEPS` with `frames=False`
        (`platform_contracts.limits`). `agent` is recorded with the first step, where
        the decision was made. With `wait=False` it returns a `PendingHold` at once: the world
        keeps moving while the agent thinks; `pending.result()` waits for the `Held`, and any
        other request before that raises SessionBusyError.
        """
        where = f"session {self.session_id} ({self.env_id}), hold after step {self._steps}"
        check_hold(steps, frames, where)
        try:
            value = encode_value(action, self.action_space)
        except (ValueError, TypeError) as exc:
            raise errors.InvalidActionError(f"{where}: {exc}", session_id=self.session_id) from None
        command = env_pb.HoldRequest(action=value, steps=int(steps), frames=frames)
        if agent:
            command.agent.CopyFrom(datamap_from_dict(agent))
        request = env_pb.EnvRequest(hold=command)
        stream = self._ready_stream()
        self._traced(request)
        request_id = stream.send(request)

        def finish() -> Held:
            self._pending = None
            try:
                response = stream.receive(request_id, request)
            except errors.OutcomeUnknownError as exc:
                raise self._outcome_unknown(exc, "hold") from None
            if response.HasField("error"):
                raise self._error(response.error, "hold")
            result = response.hold
            self._steps += result.steps
            if response.warnings:
                warn_all(response.warnings, where)
            observation = decode_value(result.observation, self.observation_space)
            return held_from(result, observation, dict_from_datamap(result.info))

        if wait:
            return finish()
        self._pending = PendingHold(finish, int(steps))
        return self._pending

    def save_snapshot(self, label: str = "") -> dict[str, Any]:
        """Keep the current state durably (through crashes and restarts), named `label`.

        Returns the saved snapshot: `id` (for `platform_sdk.resume` and `restore_saved`),
        `label`, `env_id`, `kwargs`, `session_id`, `created_at`, `size_bytes`.
        """
        request = env_pb.EnvRequest(save_snapshot=env_pb.SaveSnapshotRequest(label=label))
        return saved_to_dict(self._call(request, "save_snapshot").save_snapshot.saved)

    def restore_saved(self, snapshot_id: str) -> tuple[Any, dict[str, Any]]:
        """Return this session to a saved snapshot of the same environment and arguments.

        Returns `(observation, info)` at the snapshot's moment; `info["restore_s"]` is the wall
        time, in seconds, the environment took to load it, measured by the environment server
        (not the recorder's read nor the round trip; left out by an older server).
        """
        request = env_pb.EnvRequest(restore_saved=env_pb.RestoreSavedRequest(id=snapshot_id))
        result = self._call(request, "restore_saved").restore_saved
        self._steps = 0
        return decode_value(result.observation, self.observation_space), restored_info(result)

    def get_observation_labels(self) -> list[tuple[str, int, int]]:
        """The environment's names of the parts of its flat observation: (name, start, stop).

        Empty when the environment names none; see `labelled`.
        """
        return list(self._labels)

    def labelled(self, observation: Any) -> dict[str, np.ndarray]:
        """Split an observation by the environment's labels: {"joint_angles": array, ...}.

        Raises:
            LabelError: the environment names no parts of its observation.
        """
        return labelled(observation, self.observation_space, self._labels)

    def snapshot(self) -> str:
        """Keep the full state (RNG included) in the instance; returns a handle for `restore`."""
        return self._call(env_pb.EnvRequest(snapshot=env_pb.SnapshotRequest()), "snapshot").snapshot.handle

    def restore(self, handle: str) -> tuple[Any, dict[str, Any]]:
        """Return to a snapshot: the same actions then give the same observations.

        Returns `(observation, info)` at the snapshot's moment; `info["restore_s"]` is the wall
        time, in seconds, the environment took to restore, measured by the environment server
        (not the round trip; left out by an older server). Most environments restore in
        milliseconds; a Doom environment replays its episode, so the longer the episode, the longer.
        """
        result = self._call(env_pb.EnvRequest(restore=env_pb.RestoreRequest(handle=handle)), "restore").restore
        return decode_value(result.observation, self.observation_space), restored_info(result)

    # -- plumbing ---------------------------------------------------------------------------
    def _reopen(self) -> None:
        self._pending = None
        self.resumed = None
        self._steps = 0
        self._take_spec(self._open(self.env_id, self.settings, self._create_fields))

    def _ready_stream(self) -> SessionStream:
        if self._closed:
            raise errors.SessionClosedError(
                f"session {getattr(self, 'session_id', '?')} ({self.env_id}) is closed: reset() opens a new session "
                "with the same settings", session_id=getattr(self, "session_id", None))
        stream = super()._ready_stream()
        if self._pending is not None:
            raise errors.SessionBusyError(
                f"session {self.session_id} ({self.env_id}): a hold of {self._pending.steps} steps is still running; "
                "call its result() first",
                session_id=self.session_id,
            )
        return stream

    def _where(self, what: str) -> str:
        where = super()._where(what)
        if what == "step":
            return f"{where} {self._steps + 1}"
        if what == "hold":
            return f"{where} after step {self._steps}"
        return where


class SessionOpener:
    """The entry point of a remote environment's `EnvSpec`: calling it starts a new session of
    the same environment with the same settings (`gymnasium.make(env.spec)`, `env.spec.make()`,
    which Gymnasium's `check_env` uses).

    Its keyword arguments are the environment's kwargs (the spec's `kwargs`, updated with
    make's). `render_mode`, unless the environment's own kwargs have one, is make's argument: the
    session renders RGB frames, so only a mode in its `metadata["render_modes"]` is accepted.

    Args:
        env_id: the catalog id.
        kwargs: the environment's kwargs (the spec's `kwargs`).
        settings: the rest of `connect`'s arguments (url, token, record, ...).
    """

    def __init__(self, env_id: str, kwargs: Mapping[str, Any], settings: SessionSettings | None = None) -> None:
        self.env_id = env_id
        self.kwargs = dict(kwargs)
        self.settings = settings if settings is not None else SessionSettings()

    def spec(self, max_episode_steps: int | None) -> EnvSpec:
        """The `EnvSpec` of a session made by this opener."""
        return EnvSpec(id=self.env_id, entry_point=self, max_episode_steps=max_episode_steps, kwargs=dict(self.kwargs))

    def __call__(self, **kwargs: Any) -> RemoteEnv:
        asked = kwargs.get("render_mode")
        if "render_mode" not in self.kwargs:
            kwargs.pop("render_mode", None)
        env = RemoteEnv(self.env_id, kwargs=kwargs, settings=self.settings)
        if asked is not None and asked not in env.metadata["render_modes"]:
            env.close()
            raise errors.InvalidRequestError(
                f"{self.env_id}: render_mode {asked!r} is not available: a session renders "
                f"{' or '.join(env.metadata['render_modes'])} frames"
            )
        return env

    def __repr__(self) -> str:  # no token: specs are printed
        return f"SessionOpener({self.env_id!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionOpener) and (self.env_id, self.kwargs, self.settings) == (
            other.env_id, other.kwargs, other.settings)

    def __hash__(self) -> int:
        return hash(self.env_id)


def saved_to_dict(saved: env_pb.SavedSnapshot) -> dict[str, Any]:
    """A saved snapshot's description as a dict (kwargs decoded)."""
    return {
        "id": saved.id,
        "label": saved.label,
        "session_id": saved.session_id,
        "env_id": saved.env_id,
        "kwargs": json.loads(saved.kwargs_json) if saved.kwargs_json else {},
        "created_at": saved.created_at,
        "seq": saved.seq,
        "size_bytes": saved.size_bytes,
    }
