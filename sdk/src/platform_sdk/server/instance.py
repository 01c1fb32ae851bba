"""One hosted environment: answers `EnvRequest`s with `EnvResponse`s (no gRPC here)."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import trace
from platform_contracts.spaces import UnsupportedSpaceError, encode_value, space_to_proto
from platform_contracts.tracing import extract_dict
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.labels import LabelError, observation_labels
from platform_sdk.server import snapshots
from platform_sdk.server.actions import decode_action
from platform_sdk.server.errors import CommandError, StartupError
from platform_sdk.server.frames import encode_frame

log = logging.getLogger(__name__)

_Handler = Callable[[env_pb.EnvRequest, env_pb.EnvResponse], None]


class EnvInstance:
    """The environment, its snapshots and the commands of the environment protocol.

    Args:
        env: the Gymnasium environment (already built).
        env_id: the id reported by `spec`.
        jpeg_quality: quality of rendered JPEG frames (1-100).
        tracer: makes a span per request whose `trace_context` is valid; None for no spans.

    Raises:
        StartupError: the environment's spaces cannot be carried by the protocol, or its
            observation labels do not fit its observation space.
    """

    def __init__(
        self, env: Any, env_id: str, *, jpeg_quality: int = 90, tracer: trace.Tracer | None = None
    ) -> None:
        self.env = env
        self.env_id = env_id
        self.jpeg_quality = jpeg_quality
        self._tracer = tracer
        try:
            self._spec = env_pb.SpecResponse(
                env_id=env_id,
                observation_space=space_to_proto(env.observation_space),
                action_space=space_to_proto(env.action_space),
                render_mode=getattr(env, "render_mode", None) or "",
                metadata=datamap_from_dict(spec_metadata(env)),
            )
            for name, start, stop in observation_labels(env):
                self._spec.observation_labels.add(name=name, start=start, stop=stop)
        except (UnsupportedSpaceError, LabelError) as exc:
            raise StartupError(f"{env_id}: {exc}") from None
        self._has_reset = False
        self.closed = False
        self._observation: Any = None
        self._info: Any = None
        self._snapshots: dict[str, snapshots.Snapshot] = {}
        self._next_handle = 1
        self._handlers: dict[str, _Handler] = {
            "spec": self._spec_command,
            "reset": self._reset,
            "step": self._step,
            "snapshot": self._snapshot,
            "restore": self._restore,
            "render": self._render,
            "close": self._close,
        }

    def handle(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        """Answer one request; never raises: failures are answered with `error`."""
        command = request.WhichOneof("command")
        if request.trace_context and self._tracer is not None:
            ctx = extract_dict(request.trace_context)
            if trace.get_current_span(ctx).get_span_context().is_valid:
                with self._tracer.start_as_current_span(
                    f"env.{command}", context=ctx, attributes={"env.id": self.env_id}
                ) as span:
                    response = self._answer(request, command)
                    if response.HasField("error"):
                        span.set_attribute("env.error", env_pb.ErrorCode.Name(response.error.code))
                    return response
        return self._answer(request, command)

    def close(self) -> None:
        """Close the environment (idempotent)."""
        if not self.closed:
            self.closed = True
            self._snapshots.clear()
            try:
                self.env.close()
            except Exception:
                log.exception("%s: closing the environment failed", self.env_id)

    def _answer(self, request: env_pb.EnvRequest, command: str | None) -> env_pb.EnvResponse:
        response = env_pb.EnvResponse(id=request.id)
        try:
            if command is None:
                raise CommandError(env_pb.ERROR_CODE_INVALID_ARGUMENT, "the request has no command")
            if self.closed:
                raise CommandError(env_pb.ERROR_CODE_FAILED_PRECONDITION, "the environment is closed")
            self._handlers[command](request, response)
        except CommandError as exc:
            response = env_pb.EnvResponse(
                id=request.id, error=env_pb.Error(code=exc.code, message=exc.message)
            )
        except Exception as exc:
            log.exception("%s: %s failed", self.env_id, command)
            response = env_pb.EnvResponse(
                id=request.id,
                error=env_pb.Error(code=env_pb.ERROR_CODE_INTERNAL, message=f"{type(exc).__name__}: {exc}"),
            )
        return response

    def _spec_command(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        response.spec.CopyFrom(self._spec)

    def _reset(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        command = request.reset
        seed = command.seed if command.HasField("seed") else None
        options = dict_from_datamap(command.options) or None
        observation, info = self.env.reset(seed=seed, options=options)
        self._has_reset = True
        self._observation, self._info = observation, info
        result = response.reset
        result.observation.CopyFrom(encode_value(observation, self.env.observation_space))
        result.info.CopyFrom(datamap_from_dict(info))
        if command.render:
            result.frame.CopyFrom(self._frame())

    def _step(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        if not self._has_reset:
            raise CommandError(
                env_pb.ERROR_CODE_FAILED_PRECONDITION, "step before the first reset: call reset first"
            )
        command = request.step
        action = decode_action(command.action, self.env.action_space)
        observation, reward, terminated, truncated, info = self.env.step(action)
        self._observation, self._info = observation, info
        result = response.step
        result.observation.CopyFrom(encode_value(observation, self.env.observation_space))
        result.reward = float(reward)
        result.terminated = bool(terminated)
        result.truncated = bool(truncated)
        result.info.CopyFrom(datamap_from_dict(info))
        if command.render:
            result.frame.CopyFrom(self._frame())

    def _snapshot(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        if not self._has_reset:
            raise CommandError(
                env_pb.ERROR_CODE_FAILED_PRECONDITION, "snapshot before the first reset: call reset first"
            )
        try:
            snapshot = snapshots.capture(self.env, self._observation, self._info)
        except snapshots.SnapshotError as exc:
            raise CommandError(
                env_pb.ERROR_CODE_UNIMPLEMENTED, f"{self.env_id} cannot be snapshotted: {exc}"
            ) from None
        handle = f"snap-{self._next_handle}"
        self._next_handle += 1
        self._snapshots[handle] = snapshot
        response.snapshot.handle = handle

    def _restore(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        handle = request.restore.handle
        snapshot = self._snapshots.get(handle)
        if snapshot is None:
            raise CommandError(env_pb.ERROR_CODE_NOT_FOUND, f"no snapshot {handle!r} in {self.env_id}")
        env, observation, info = snapshots.restore(snapshot)
        previous, self.env = self.env, env
        self._observation, self._info = observation, info
        self._has_reset = True
        try:
            previous.close()
        except Exception:
            log.exception("%s: closing the environment replaced by a restore failed", self.env_id)
        result = response.restore
        result.observation.CopyFrom(encode_value(observation, self.env.observation_space))
        result.info.CopyFrom(datamap_from_dict(info))

    def _render(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        response.render.frame.CopyFrom(self._frame())

    def _close(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        self.close()
        response.close.SetInParent()

    def _frame(self) -> env_pb.Frame:
        mode = getattr(self.env, "render_mode", None)
        if mode in (None, "human", "ansi"):
            raise CommandError(
                env_pb.ERROR_CODE_UNIMPLEMENTED, f"{self.env_id} renders no frames (render_mode={mode!r})"
            )
        frame = self.env.render()
        if isinstance(frame, list):  # rgb_array_list: the latest frame
            frame = frame[-1] if frame else None
        if frame is None:
            raise CommandError(env_pb.ERROR_CODE_FAILED_PRECONDITION, f"{self.env_id} rendered no frame")
        try:
            return encode_frame(frame, self.jpeg_quality)
        except ValueError as exc:
            raise CommandError(env_pb.ERROR_CODE_INTERNAL, f"{self.env_id}: {exc}") from None


def spec_metadata(env: Any) -> dict[str, Any]:
    """The JSON-able parts of `env.metadata`, with `control_rate` (decisions per second) added
    from the environment's time step (`dt`, or classic control's `tau`) when it sets none."""
    metadata = jsonable_metadata(getattr(env, "metadata", None) or {})
    if "control_rate" not in metadata:
        unwrapped = getattr(env, "unwrapped", env)
        for name in ("dt", "tau"):
            step = getattr(unwrapped, name, None)
            if isinstance(step, (int, float)) and not isinstance(step, bool) and step > 0:
                metadata["control_rate"] = 1.0 / float(step)
                break
    return metadata


def jsonable_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-able parts of `env.metadata` (numbers, strings, lists and dicts of them)."""
    result: dict[str, Any] = {}
    for key, value in metadata.items():
        ok, clean = _jsonable(value)
        if ok and isinstance(key, str):
            result[key] = clean
    return result


def _jsonable(value: Any) -> tuple[bool, Any]:
    if value is None or isinstance(value, (bool, int, str)):
        return True, value
    if isinstance(value, float):
        return math.isfinite(value), value
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # NumPy scalars
        return _jsonable(value.item())
    if isinstance(value, (list, tuple)):
        items = [_jsonable(v) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    if isinstance(value, Mapping):
        pairs = {k: _jsonable(v) for k, v in value.items()}
        return all(isinstance(k, str) and ok for k, (ok, _) in pairs.items()), {
            k: v for k, (_, v) in pairs.items()
        }
    return False, None
