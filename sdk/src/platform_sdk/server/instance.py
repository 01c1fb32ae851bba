"""One hosted environment: answers `EnvRequest`s with `EnvResponse`s (no gRPC here).

The commands live here and in their own modules: `auto_reset` (a step and the reset after an
ending), `holds` (hold), `state_transfer` (export_state, import_state), `batch` (batch); a
vector instance of several environments is `platform_sdk.server.vector`. Those modules take the
instance as a Protocol of their own, naming what they use of it (`auto_reset.Steppable`,
`holds.Holdable`, `state_transfer.StateHolder`, `batch.SubEnvironment`), and never import this
module.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import trace
from platform_contracts.limits import DEFAULT_JPEG_QUALITY
from platform_contracts.spaces import value_writer
from platform_contracts.tracing import extract_dict
from platform_contracts.values import datamap_from_dict, dict_from_datamap
from platform_envs.world_change_timeline import (
    WorldChangeTimeline,
    latest_record,
    timeline_of,
    write_recorded,
)
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.server import snapshots
from platform_sdk.server.actions import action_decoder
from platform_sdk.server.auto_reset import advance, write_step
from platform_sdk.server.batch import answer_batch
from platform_sdk.server.errors import CommandError
from platform_sdk.server.frames import encode_frame, frame_array
from platform_sdk.server.holds import answer_hold
from platform_sdk.server.frame_schedule import FrameSchedule
from platform_sdk.server.later_frames import NOT_DRAWN, RENDER_IS_OBSERVATION, LaterFrames
from platform_sdk.server.painted import frame_painter
from platform_sdk.server.spec import build_spec, jsonable_metadata, spec_metadata
from platform_sdk.server.state_transfer import answer_export_state, answer_import_state

__all__ = ["EnvInstance", "answer_traced", "jsonable_metadata", "spec_metadata"]

log = logging.getLogger(__name__)

_Handler = Callable[[env_pb.EnvRequest, env_pb.EnvResponse], None]
_NO_FRAMES = (None, "human", "ansi")


class EnvInstance:
    """The environment, its snapshots and the commands of the environment protocol.

    Args:
        env: the Gymnasium environment (already built; time limits already off when `endless`).
        env_id: the id reported by `spec`.
        jpeg_quality: quality of rendered JPEG frames (1-100).
        tracer: makes a span per request whose `trace_context` is valid; None for no spans.
        endless: an episode that ends restarts in place (see `platform_sdk.server.auto_reset`).

    Attributes:
        observation, info: the latest observation and info (None before the first reset).
        has_reset: whether the environment has been reset (steps need it).
        timeline: `env` when it is a `WorldChangeTimeline` (answers then carry ForRecording),
            else None.

    Raises:
        StartupError: the environment's spaces cannot be carried by the protocol, or its
            observation labels do not fit its observation space.
    """

    def __init__(
        self,
        env: Any,
        env_id: str,
        *,
        jpeg_quality: int = DEFAULT_JPEG_QUALITY,
        tracer: trace.Tracer | None = None,
        endless: bool = False,
    ) -> None:
        self.env = env
        self.timeline: WorldChangeTimeline | None = timeline_of(env)
        self.painter = frame_painter(env)  # its recorded frames are painted by the recorder (`painted`)
        self.env_id = env_id
        self.jpeg_quality = jpeg_quality
        self.endless = endless
        self._tracer = tracer
        self._spec = build_spec(env, env_id, endless=endless)
        self.has_reset = False
        self.closed = False
        self.observation: Any = None
        self.info: Any = None
        self._snapshots: dict[str, snapshots.Snapshot] = {}
        self._next_handle = 1
        self._spaces_of: Any = None  # the environment `_spaces` belong to
        self._spaces: tuple[Callable[[Any], Any], Any] = (lambda value: None, None)
        self._later = LaterFrames(env_id, jpeg_quality)
        self.frame_schedule = FrameSchedule()  # which render_later frames are drawn; counts steps
        self._handlers: dict[str, _Handler] = {
            "spec": self._spec_command,
            "reset": self._reset,
            "step": self._step,
            "snapshot": self._snapshot,
            "restore": self._restore,
            "render": self._render,
            "close": self._close,
            "hold": functools.partial(answer_hold, self),
            "export_state": functools.partial(answer_export_state, self),
            "import_state": functools.partial(answer_import_state, self),
            "batch": functools.partial(answer_batch, (self,)),
            "save_snapshot": _served_by_the_env_host,
            "restore_saved": _served_by_the_env_host,
            "take_frames": _take_frames,
        }

    @property
    def spec(self) -> env_pb.SpecResponse:
        """The answer to `spec`."""
        return self._spec

    def handle(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        """Answer one request; never raises: failures are answered with `error`. The answer
        carries the frames of earlier `render_later` requests (`later_frames`)."""
        later = self._later
        later.encode()  # normally done already: the server calls after_answer
        response = answer_traced(self._tracer, self.env_id, request, self._answer)
        later.attach(response)
        return response

    def after_answer(self) -> None:
        """Encode the frames kept for `render_later` (the server calls this once the answer
        has been sent, so that the encoding overlaps the caller's work)."""
        self._later.encode()

    def answer_into(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        """Answer `request` into the empty `response` (no span); never raises."""
        command = request.WhichOneof("command")
        response.id = request.id
        if request.HasField("frame_schedule"):
            self.frame_schedule.set(request.frame_schedule)
        try:
            if command is None:
                raise CommandError(env_pb.ERROR_CODE_INVALID_ARGUMENT, "the request has no command")
            if self.closed:
                raise CommandError(env_pb.ERROR_CODE_FAILED_PRECONDITION, "the environment is closed")
            self._handlers[command](request, response)
        except CommandError as exc:
            _fail(response, request.id, exc.code, exc.message)
        except Exception as exc:
            log.exception("%s: %s failed", self.env_id, command)
            _fail(response, request.id, env_pb.ERROR_CODE_INTERNAL, f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Close the environment (idempotent)."""
        if not self.closed:
            self.closed = True
            self._snapshots.clear()
            try:
                self.env.close()
            except Exception:
                log.exception("%s: closing the environment failed", self.env_id)

    def require_reset(self, command: str) -> None:
        """Raises CommandError (FAILED_PRECONDITION) before the first reset."""
        if not self.has_reset:
            raise CommandError(
                env_pb.ERROR_CODE_FAILED_PRECONDITION, f"{command} before the first reset: call reset first"
            )

    def check_renders(self) -> None:
        """Raises CommandError (UNIMPLEMENTED) when the environment renders no frames."""
        mode = getattr(self.env, "render_mode", None)
        if mode in _NO_FRAMES:
            raise CommandError(
                env_pb.ERROR_CODE_UNIMPLEMENTED, f"{self.env_id} renders no frames (render_mode={mode!r})"
            )

    def frame(self) -> env_pb.Frame:
        """The current frame as JPEG."""
        return encode_frame(self.rendered(), self.jpeg_quality)

    def rendered(self) -> Any:
        """The current frame as a checked H x W x C uint8 array (`frames.frame_array`)."""
        self.check_renders()
        frame = self.env.render()
        if isinstance(frame, list):  # rgb_array_list: the latest frame
            frame = frame[-1] if frame else None
        if frame is None:
            raise CommandError(env_pb.ERROR_CODE_FAILED_PRECONDITION, f"{self.env_id} rendered no frame")
        try:
            return frame_array(frame)
        except ValueError as exc:
            raise CommandError(env_pb.ERROR_CODE_INTERNAL, f"{self.env_id}: {exc}") from None

    def later_frame(self, copy: bool = False) -> Any:
        """The current frame for `render_later`: the rendered array (`rendered`; a copy with
        `copy`), or, rendering nothing: `RENDER_IS_OBSERVATION` when the hosted environment says
        its `render()` is always exactly its observation (`render_is_observation = True`, as
        `platform_envs.adapters.atari` does; read on the hosted object only: a wrapper that
        changes the observation does not pass it on, Gymnasium wrappers forward no attributes),
        or a painted `Frame` (`painted`: CartPole) that the recorder draws from the observation."""
        self.check_renders()
        if self.painter is not None:
            return self.painter(self.jpeg_quality)
        if getattr(self.env, "render_is_observation", False) is True:
            return RENDER_IS_OBSERVATION
        frame = self.rendered()
        return frame.copy() if copy else frame

    def replace_env(self, env: Any, observation: Any, info: Any) -> None:
        """Host `env` (a restored or imported copy) from now on, at `observation` and `info`."""
        previous, self.env = self.env, env
        self.timeline = timeline_of(env)
        self.painter = frame_painter(env)
        self.observation, self.info = observation, info
        self.has_reset = True
        if previous is not env:
            try:
                previous.close()
            except Exception:
                log.exception("%s: closing the replaced environment failed", self.env_id)

    def _step_spaces(self) -> tuple[Callable[[Any], Any], Any]:
        """The hosted environment's action decoder (`actions.action_decoder`) and observation
        space, made once per environment object (a wrapped environment's spaces are properties
        walking its wrappers; the spec the client holds was built from them, so they do not
        change under one object)."""
        env = self.env
        if env is not self._spaces_of:
            self._spaces = (action_decoder(env.action_space), env.observation_space)
            self._spaces_of = env
        return self._spaces

    def _answer(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        response = env_pb.EnvResponse()
        self.answer_into(request, response)
        return response

    def _spec_command(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        response.spec.CopyFrom(self._spec)

    def _reset(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        command = request.reset
        if command.render or command.render_later:
            self.check_renders()
        seed = command.seed if command.HasField("seed") else None
        options = dict_from_datamap(command.options) or None
        try:
            observation, info = self.env.reset(seed=seed, options=options)
        except Exception as exc:
            if options is None:
                raise
            # The caller's options, refused by the environment (as a make's kwargs can be).
            log.info("%s: reset with options %r failed", self.env_id, options, exc_info=True)
            raise CommandError(
                env_pb.ERROR_CODE_INVALID_ARGUMENT,
                f"{self.env_id}: reset with options {options!r} failed: {type(exc).__name__}: {exc}",
            ) from None
        self.has_reset = True
        self.observation, self.info = observation, info
        result = response.reset
        write_observation = value_writer(self.env.observation_space)
        write_observation(result.observation, observation)
        result.info.CopyFrom(datamap_from_dict(info))
        recorded = None if self.timeline is None else latest_record(self.timeline)
        if recorded is not None:
            write_recorded(result.for_recording, recorded.applied, recorded.true_observation, write_observation)
        if command.render:
            result.frame.CopyFrom(self.frame())
        elif command.render_later:
            drawn = self.later_frame() if self.frame_schedule.reset_keeps() else NOT_DRAWN
            self._later.keep(request.id, drawn, observation)
            result.frame_later = True

    def _step(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        if not self.has_reset:
            self.require_reset("step")
        command = request.step
        decode, observation_space = self._step_spaces()
        action = decode(command.action)
        render = command.render
        later = command.render_later and not render
        drawn = later and self.frame_schedule.step_keeps()  # a thinned life draws only the frames it keeps
        if render or later:
            self.check_renders()
        stepped = advance(self, action, render=render, render_later=drawn, auto_reset=command.auto_reset)
        write_step(response.step, stepped, observation_space)
        if later:  # last: a step that fails above keeps no frame
            ending = stepped.ending
            if not drawn:
                self._later.keep(request.id, NOT_DRAWN, stepped.observation)
            elif ending is None:
                self._later.keep(request.id, stepped.later_frame, stepped.observation)
            else:
                self._later.keep(request.id, stepped.later_frame, stepped.observation,
                                 ending.later_frame, ending.observation)
            response.step.frame_later = True

    def _snapshot(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        self.require_reset("snapshot")
        try:
            snapshot = snapshots.capture(self.env, self.observation, self.info)
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
        started = time.perf_counter()
        env, observation, info = snapshots.restore(snapshot)  # a Doom environment replays its episode here
        self.replace_env(env, observation, info)
        result = response.restore
        result.seconds = time.perf_counter() - started
        value_writer(env.observation_space)(result.observation, observation)
        result.info.CopyFrom(datamap_from_dict(info))

    def _render(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        self.check_renders()
        self.require_reset("render")  # Gymnasium refuses render() before reset() (OrderEnforcing)
        response.render.frame.CopyFrom(self.frame())

    def _close(self, request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
        self.close()  # the frames still owed go with this answer (handle attaches them)
        response.close.SetInParent()


def answer_traced(
    tracer: trace.Tracer | None,
    env_id: str,
    request: env_pb.EnvRequest,
    answer: Callable[[env_pb.EnvRequest], env_pb.EnvResponse],
) -> env_pb.EnvResponse:
    """`answer(request)`, inside a span `env.<command>` when the request carries a valid trace
    context and there is a tracer."""
    if request.trace_context and tracer is not None:
        ctx = extract_dict(request.trace_context)
        if trace.get_current_span(ctx).get_span_context().is_valid:
            command = request.WhichOneof("command")
            with tracer.start_as_current_span(
                f"env.{command}", context=ctx, attributes={"env.id": env_id}
            ) as span:
                response = answer(request)
                if response.HasField("error"):
                    span.set_attribute("env.error", env_pb.ErrorCode.Name(response.error.code))
                return response
    return answer(request)


def _fail(
    response: env_pb.EnvResponse, request_id: int, code: env_pb.ErrorCode.ValueType, message: str
) -> None:
    response.Clear()
    response.id = request_id
    response.error.code = code
    response.error.message = message


def _served_by_the_env_host(request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
    command = request.WhichOneof("command")
    raise CommandError(
        env_pb.ERROR_CODE_UNIMPLEMENTED,
        f"{command} is served by the env host (it keeps saved snapshots), not the environment server",
    )


def _take_frames(request: env_pb.EnvRequest, response: env_pb.EnvResponse) -> None:
    response.take_frames.SetInParent()  # the frames owed are attached by `handle`
