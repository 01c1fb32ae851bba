"""`connect()`: a platform session as a `gymnasium.Env`."""

from __future__ import annotations

from typing import Any, Self, SupportsFloat

import gymnasium as gym
import numpy as np
from opentelemetry import trace
from platform_contracts.spaces import decode_value, encode_value, space_from_proto
from platform_contracts.tracing import inject_dict
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk import errors
from platform_sdk.client.rest import RestClient
from platform_sdk.client.settings import resolve_token, resolve_url
from platform_sdk.client.stream import SessionStream
from platform_sdk.labels import labelled

_tracer = trace.get_tracer("platform_sdk")
_ERRORS: dict[int, type[errors.PlatformError]] = {
    env_pb.ERROR_CODE_INVALID_ACTION: errors.InvalidActionError,
    env_pb.ERROR_CODE_INVALID_ARGUMENT: errors.InvalidActionError,
    env_pb.ERROR_CODE_NOT_FOUND: errors.SessionNotFoundError,
}


def connect(
    env_id: str,
    url: str | None = None,
    kwargs: dict[str, Any] | None = None,
    token: str | None = None,
    record: bool = False,
    jpeg_quality: int | None = None,
    record_frames: bool = False,
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
    """
    return RemoteEnv(env_id, url=url, kwargs=kwargs, token=token, record=record, jpeg_quality=jpeg_quality,
                     record_frames=record_frames)


class RemoteEnv(gym.Env):
    """A session on the platform. Steps travel over one WebSocket as protobuf messages."""

    def __init__(
        self,
        env_id: str,
        url: str | None = None,
        kwargs: dict[str, Any] | None = None,
        token: str | None = None,
        record: bool = False,
        jpeg_quality: int | None = None,
        record_frames: bool = False,
    ) -> None:
        self.env_id = env_id
        self._rest = RestClient(resolve_url(url), resolve_token(token))
        self._stream: SessionStream | None = None
        self._closed = False
        self._steps = 0
        try:
            session = self._rest.create_session(env_id, kwargs, record, jpeg_quality, record_frames)
        except errors.PlatformError:
            self._rest.close()
            raise
        self.session_id: str = session["id"]
        self.session = session
        try:
            self._stream = SessionStream(self._rest.url, self.session_id, resolve_token(token))
            spec = self._call(env_pb.EnvRequest(spec=env_pb.SpecRequest()), "spec").spec
        except BaseException:
            self.close()
            raise
        self.observation_space = space_from_proto(spec.observation_space)
        self.action_space = space_from_proto(spec.action_space)
        self.render_mode = spec.render_mode or None
        self.metadata = {**dict_from_datamap(spec.metadata), "render_modes": ["rgb_array"]}
        if self.render_mode:
            self.metadata["render_modes"] = sorted({"rgb_array", self.render_mode})
        self._labels = [(label.name, label.start, label.stop) for label in spec.observation_labels]

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        command = env_pb.ResetRequest(options=datamap_from_dict(options))
        if seed is not None:
            command.seed = int(seed)
        result = self._call(env_pb.EnvRequest(reset=command), "reset").reset
        self._steps = 0
        return decode_value(result.observation, self.observation_space), dict_from_datamap(result.info)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        request = env_pb.EnvRequest()
        try:
            if action.__class__ is int and self.action_space.__class__ is gym.spaces.Discrete:
                request.step.action.discrete = action  # the common case, without encode_value's checks
            else:
                request.step.action.CopyFrom(encode_value(action, self.action_space))
        except (ValueError, TypeError) as exc:
            raise errors.InvalidActionError(
                f"session {self.session_id} ({self.env_id}), step {self._steps + 1}: {exc}", session_id=self.session_id
            ) from None
        result = self._call(request, "step").step
        self._steps += 1
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

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._stream is not None:
            self._stream.close()
        if getattr(self, "session_id", None):
            self._rest.close_session(self.session_id)
        self._rest.close()

    # -- Platform extras ---------------------------------------------------------------------
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
        """Return to a snapshot: the same actions then give the same observations."""
        result = self._call(env_pb.EnvRequest(restore=env_pb.RestoreRequest(handle=handle)), "restore").restore
        return decode_value(result.observation, self.observation_space), dict_from_datamap(result.info)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
            pass

    # -- plumbing ---------------------------------------------------------------------------
    def _call(self, request: env_pb.EnvRequest, what: str) -> env_pb.EnvResponse:
        if self._closed or self._stream is None:
            raise errors.SessionClosedError(f"session {getattr(self, 'session_id', '?')} ({self.env_id}) is closed")
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            response = self._stream.call(request)  # no tracing configured: a span would be a no-op
        else:
            with _tracer.start_as_current_span(f"env.{what}") as span:
                if span.get_span_context().is_valid:
                    inject_dict(request.trace_context)  # type: ignore[arg-type]
                response = self._stream.call(request)
        if response.HasField("error"):
            raise self._error(response.error, what)
        return response

    def _error(self, error: env_pb.Error, what: str) -> errors.PlatformError:
        where = f"session {self.session_id} ({self.env_id}), {what}"
        if what == "step":
            where += f" {self._steps + 1}"
        message = f"{where}: {error.message}"
        if error.code == env_pb.ERROR_CODE_UNAVAILABLE:
            return errors.EnvironmentCrashedError(message, log_tail=error.log_tail, session_id=self.session_id)
        cls = _ERRORS.get(error.code, errors.PlatformError)
        return cls(message, session_id=self.session_id)


def decode_frame(frame: env_pb.Frame) -> np.ndarray:
    if frame.encoding == "jpeg":
        import simplejpeg

        return simplejpeg.decode_jpeg(frame.data, colorspace="RGB")
    return np.frombuffer(frame.data, dtype=np.uint8).reshape(frame.height, frame.width, 3)
