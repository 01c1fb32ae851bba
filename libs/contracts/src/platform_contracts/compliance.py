"""The compliance suite: checks that any environment server passes, over any connection.

A connection is anything with `call(EnvRequest) -> EnvResponse` answering in lockstep: a gRPC
`Environment/Connect` stream to an environment server or an env host, or the SDK's session
stream. Each check starts from a seeded reset, so the checks run in any order on one
connection. Each returns a `CheckResult`; `run_all` runs them all, and
`EnvironmentComplianceTests` is an abstract pytest class that runs each as a test::

    class TestMyEnv(EnvironmentComplianceTests):
        @pytest.fixture(scope="class")
        @classmethod
        def connection(cls):
            ...  # yield a connection to the server under test

Gymnasium is imported lazily (through `platform_contracts.spaces`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

from platform_contracts.spaces import encode_value, space_from_proto
from platform_contracts.values import array_from_tensor, dict_from_datamap

__all__ = [
    "CHECKS",
    "CheckResult",
    "ComplianceOptions",
    "Connection",
    "EnvironmentComplianceTests",
    "run_all",
    "run_check",
]


class Connection(Protocol):
    """A lockstep connection to an environment: one request, then its response."""

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse: ...


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check. A skipped check (nothing to check) counts as passed."""

    name: str
    passed: bool
    message: str
    skipped: bool = False

    @property
    def status(self) -> str:
        """One of PASS, FAIL and SKIP."""
        return "SKIP" if self.skipped else ("PASS" if self.passed else "FAIL")


@dataclass(frozen=True)
class ComplianceOptions:
    """How hard the checks push.

    Attributes:
        seed: the seed of every reset, and of the sampled actions.
        steps: steps per rollout (fewer when an episode ends first).
        snapshot_steps: steps replayed after a restore.
        warmup_steps: steps taken before the snapshot.
    """

    seed: int = 1234
    steps: int = 20
    snapshot_steps: int = 10
    warmup_steps: int = 3


class CheckFailed(Exception):
    """Raised inside a check: the message says what was wrong."""


class _Skip(Exception):
    """Raised inside a check: it does not apply to this environment."""


class _Probe:
    """The connection, the spec and its decoded spaces, for one check."""

    def __init__(self, connection: Connection, options: ComplianceOptions) -> None:
        self.connection = connection
        self.options = options
        self._next_id = 0
        self.spec = self.ok(env_pb.EnvRequest(spec=env_pb.SpecRequest()), "spec").spec
        try:
            self.observation_space = space_from_proto(self.spec.observation_space)
            self.action_space = space_from_proto(self.spec.action_space, seed=options.seed)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"the spec's spaces do not decode: {_one_line(exc)}") from None

    @property
    def renders(self) -> bool:
        return self.spec.render_mode not in ("", "human", "ansi")

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        self._next_id += 1
        request.id = self._next_id
        try:
            response = self.connection.call(request)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(
                f"the connection failed on {request.WhichOneof('command')}: {_one_line(exc)}"
            ) from None
        if response.id != request.id:
            raise CheckFailed(f"response id {response.id} answers request {request.id}")
        return response

    def ok(self, request: env_pb.EnvRequest, what: str) -> env_pb.EnvResponse:
        """`call`, failing the check on an error or a response of the wrong kind."""
        command = request.WhichOneof("command")
        response = self.call(request)
        if response.HasField("error"):
            code = env_pb.ErrorCode.Name(response.error.code)
            raise CheckFailed(f"{what} answered {code}: {response.error.message}")
        if response.WhichOneof("result") != command:
            raise CheckFailed(f"{what} answered {response.WhichOneof('result')!r}, not {command!r}")
        return response

    def reset(self, seed: int | None = None, render: bool = False) -> env_pb.ResetResponse:
        request = env_pb.EnvRequest(reset=env_pb.ResetRequest(render=render))
        if seed is not None:
            request.reset.seed = seed
        return self.ok(request, f"reset(seed={seed})").reset

    def step(self, action: pb.Value, what: str, render: bool = False) -> env_pb.StepResponse:
        return self.ok(env_pb.EnvRequest(step=env_pb.StepRequest(action=action, render=render)), what).step

    def actions(self, count: int) -> list[pb.Value]:
        """`count` actions sampled from the action space (the same ones for the same seed)."""
        space = space_from_proto(self.spec.action_space, seed=self.options.seed)
        try:
            return [encode_value(space.sample(), space) for _ in range(count)]
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"cannot sample and encode actions of {space}: {_one_line(exc)}") from None

    def rollout(self, seed: int, count: int, render: bool = False) -> list[tuple[Any, ...]]:
        """Reset with `seed`, then step `count` sampled actions or until the episode ends."""
        first = self.reset(seed, render=render)
        trajectory = [_outcome(first.observation, 0.0, False, False, first.frame if render else None)]
        for index, action in enumerate(self.actions(count)):
            result = self.step(action, f"step {index + 1}", render=render)
            frame = result.frame if render else None
            trajectory.append(
                _outcome(result.observation, result.reward, result.terminated, result.truncated, frame)
            )
            if result.terminated or result.truncated:
                break
        return trajectory

    def observation(self, value: pb.Value, where: str) -> Any:
        """The decoded observation, failing the check unless it lies in the observation space."""
        try:
            observation = _decode(value, self.observation_space)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"the observation {where} does not decode: {_one_line(exc)}") from None
        try:
            inside = bool(self.observation_space.contains(observation))
        except Exception:  # noqa: BLE001 - a malformed value can make contains() itself fail
            inside = False
        if not inside:
            raise CheckFailed(
                f"the observation {where} is not in {self.observation_space}: {_short(observation)}"
            )
        return observation


def check_spec(probe: _Probe) -> str:
    """The spec answers, names the environment, and its spaces and metadata decode."""
    if not probe.spec.env_id:
        raise CheckFailed("the spec has no env_id")
    try:
        dict_from_datamap(probe.spec.metadata)
    except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
        raise CheckFailed(f"the spec's metadata does not decode: {_one_line(exc)}") from None
    probe.actions(1)
    render = probe.spec.render_mode or "none"
    spaces = f"observations {probe.observation_space}, actions {probe.action_space}"
    return f"{probe.spec.env_id}: {' '.join(spaces.split())}, render {render}"


def check_observations(probe: _Probe) -> str:
    """Observations lie in the observation space after reset and after every step."""
    steps = 0
    for seed in (probe.options.seed, None):
        probe.observation(probe.reset(seed).observation, f"after reset(seed={seed})")
        for index, action in enumerate(probe.actions(probe.options.steps)):
            result = probe.step(action, f"step {index + 1}")
            probe.observation(result.observation, f"after step {index + 1}")
            steps += 1
            if result.terminated or result.truncated:
                break
    return f"2 resets and {steps} steps, every observation in its space"


def check_stepping(probe: _Probe) -> str:
    """Sampled actions step; rewards are finite; ended episodes reset and step again."""
    probe.reset(probe.options.seed)
    episodes, steps, total = 1, 0, 0.0
    for index, action in enumerate(probe.actions(probe.options.steps * 3)):
        result = probe.step(action, f"step {index + 1}")
        if not math.isfinite(result.reward):
            raise CheckFailed(f"step {index + 1} returned the reward {result.reward}")
        try:
            dict_from_datamap(result.info)
        except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
            raise CheckFailed(f"the info of step {index + 1} does not decode: {_one_line(exc)}") from None
        steps, total = steps + 1, total + result.reward
        if result.terminated or result.truncated:
            probe.reset()
            episodes += 1
    return f"{steps} sampled actions over {episodes} episode(s), total reward {total:.6g}"


def check_invalid_action(probe: _Probe) -> str:
    """Actions outside the action space answer ERROR_CODE_INVALID_ACTION; the stream stays up."""
    probe.reset(probe.options.seed)
    invalid = [("no action", pb.Value()), *_invalid_actions(probe.action_space)]
    for what, value in invalid:
        response = probe.call(env_pb.EnvRequest(step=env_pb.StepRequest(action=value)))
        if not response.HasField("error"):
            raise CheckFailed(f"the invalid action ({what}) was accepted")
        if response.error.code != env_pb.ERROR_CODE_INVALID_ACTION:
            code = env_pb.ErrorCode.Name(response.error.code)
            raise CheckFailed(f"the invalid action ({what}) answered {code}, not ERROR_CODE_INVALID_ACTION")
        probe.step(probe.actions(1)[0], f"a valid step after the invalid action ({what})")
    return (
        f"{len(invalid)} invalid actions refused ({', '.join(w for w, _ in invalid)}), the stream stayed up"
    )


def check_seeding(probe: _Probe) -> str:
    """Two resets with the same seed give the same trajectory for the same actions."""
    seed = probe.options.seed
    first = probe.rollout(seed, probe.options.steps)
    second = probe.rollout(seed, probe.options.steps)
    _same_trajectory(first, second, f"after reset(seed={seed}) again")
    return f"2 rollouts with seed {seed}: {len(first) - 1} identical steps"


def check_snapshot(probe: _Probe) -> str:
    """snapshot -> k steps -> restore -> the same k steps, twice: identical results and frames."""
    options = probe.options
    last = probe.reset(options.seed).observation
    for index, action in enumerate(probe.actions(options.warmup_steps)):
        result = probe.step(action, f"warm-up step {index + 1}")
        if result.terminated or result.truncated:
            last = probe.reset(options.seed + index + 1).observation
        else:
            last = result.observation
    handle = probe.ok(env_pb.EnvRequest(snapshot=env_pb.SnapshotRequest()), "snapshot").snapshot.handle
    if not handle:
        raise CheckFailed("snapshot returned an empty handle")
    actions = probe.actions(options.snapshot_steps)
    render = probe.renders
    expected = [
        _outcome(last, 0.0, False, False, None),
        *_replay(probe, actions, render, "before the restore"),
    ]
    for attempt in ("first", "second"):
        restored = probe.ok(
            env_pb.EnvRequest(restore=env_pb.RestoreRequest(handle=handle)), f"{attempt} restore"
        )
        replay = [
            _outcome(restored.restore.observation, 0.0, False, False, None),
            *_replay(probe, actions, render, f"after the {attempt} restore"),
        ]
        _same_trajectory(expected, replay, f"after the {attempt} restore", start="the restored observation")
    frames_note = " and frames" if render else ""
    return f"restore then {len(expected) - 1} steps, twice: identical observations, rewards{frames_note}"


def check_render(probe: _Probe) -> str:
    """render returns a decodable frame of its declared size, the same size after steps."""
    if not probe.renders:
        raise _Skip(f"the environment renders no frames (render_mode {probe.spec.render_mode!r})")
    sizes: list[tuple[str, tuple[int, int]]] = []
    reset = probe.reset(probe.options.seed, render=True)
    sizes.append(("the frame of reset(render=True)", _check_frame(reset.frame, "reset(render=True)")))
    render = probe.ok(env_pb.EnvRequest(render=env_pb.RenderRequest()), "render").render
    sizes.append(("render after reset", _check_frame(render.frame, "render after reset")))
    for index, action in enumerate(probe.actions(3)):
        result = probe.step(action, f"step {index + 1}", render=True)
        sizes.append((f"the frame of step {index + 1}", _check_frame(result.frame, f"step {index + 1}")))
        if result.terminated or result.truncated:
            break
    render = probe.ok(env_pb.EnvRequest(render=env_pb.RenderRequest()), "render after steps").render
    sizes.append(("render after steps", _check_frame(render.frame, "render after steps")))
    first_where, first = sizes[0]
    for where, size in sizes[1:]:
        if size != first:
            raise CheckFailed(f"{where} is {size[0]}x{size[1]}, {first_where} was {first[0]}x{first[1]}")
    return f"{len(sizes)} frames, all {first[0]}x{first[1]} ({render.frame.encoding})"


CHECKS: dict[str, Callable[[_Probe], str]] = {
    "spec": check_spec,
    "observations": check_observations,
    "stepping": check_stepping,
    "invalid_action": check_invalid_action,
    "seeding": check_seeding,
    "snapshot": check_snapshot,
    "render": check_render,
}


def run_check(name: str, connection: Connection, options: ComplianceOptions | None = None) -> CheckResult:
    """Run the check `name` (a key of `CHECKS`) over `connection`; never raises for a failure."""
    check = CHECKS[name]
    try:
        probe = _Probe(connection, options or ComplianceOptions())
        message = check(probe)
    except _Skip as exc:
        return CheckResult(name, True, str(exc), skipped=True)
    except CheckFailed as exc:
        return CheckResult(name, False, str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug in the server's answers that the check did not foresee
        return CheckResult(name, False, f"unexpected {_one_line(exc)}")
    return CheckResult(name, True, message)


def run_all(
    connection: Connection, options: ComplianceOptions | None = None, names: Sequence[str] | None = None
) -> list[CheckResult]:
    """Run every check (or those named), in the order of `CHECKS`."""
    return [run_check(name, connection, options) for name in (names or CHECKS)]


class EnvironmentComplianceTests:
    """Abstract pytest tests: subclass it (as `Test...`) and supply a `connection` fixture."""

    compliance_options = ComplianceOptions()

    def _assert(self, name: str, connection: Connection) -> None:
        result = run_check(name, connection, self.compliance_options)
        assert result.passed, f"{name}: {result.message}"

    def test_spec(self, connection: Connection) -> None:
        self._assert("spec", connection)

    def test_observations(self, connection: Connection) -> None:
        self._assert("observations", connection)

    def test_stepping(self, connection: Connection) -> None:
        self._assert("stepping", connection)

    def test_invalid_action(self, connection: Connection) -> None:
        self._assert("invalid_action", connection)

    def test_seeding(self, connection: Connection) -> None:
        self._assert("seeding", connection)

    def test_snapshot(self, connection: Connection) -> None:
        self._assert("snapshot", connection)

    def test_render(self, connection: Connection) -> None:
        self._assert("render", connection)


def _replay(probe: _Probe, actions: list[pb.Value], render: bool, where: str) -> list[tuple[Any, ...]]:
    outcomes = []
    for index, action in enumerate(actions):
        result = probe.step(action, f"step {index + 1} {where}", render=render)
        frame = result.frame if render else None
        outcomes.append(
            _outcome(result.observation, result.reward, result.terminated, result.truncated, frame)
        )
        if result.terminated or result.truncated:
            break
    return outcomes


def _outcome(
    observation: pb.Value, reward: float, terminated: bool, truncated: bool, frame: env_pb.Frame | None
) -> tuple[Any, ...]:
    """What a step returned, in a form compared bit for bit."""
    frame_key = None if frame is None else (frame.encoding, frame.width, frame.height, frame.data)
    return (_value_key(observation), float(reward), bool(terminated), bool(truncated), frame_key)


def _same_trajectory(
    expected: list[tuple[Any, ...]],
    actual: list[tuple[Any, ...]],
    where: str,
    start: str = "the reset observation",
) -> None:
    fields = ("observation", "reward", "terminated", "truncated", "frame")
    for index, (a, b) in enumerate(zip(expected, actual, strict=False)):
        step = start if index == 0 else f"step {index}"
        for name, x, y in zip(fields, a, b, strict=True):
            same = (x == y) or (
                isinstance(x, float) and math.isnan(x) and isinstance(y, float) and math.isnan(y)
            )
            if not same:
                detail = f" ({x!r} != {y!r})" if name in ("reward", "terminated", "truncated") else ""
                raise CheckFailed(f"{step} {where}: the {name} differs{detail}")
    if len(expected) != len(actual):
        raise CheckFailed(f"{where}: the episode lasted {len(actual) - 1} steps, not {len(expected) - 1}")


def _value_key(value: pb.Value) -> Any:
    """A hashable, bit-exact key of a Value (NaNs compare equal to themselves)."""
    kind = value.WhichOneof("kind")
    if kind == "tensor":
        return ("tensor", value.tensor.dtype, tuple(value.tensor.shape), value.tensor.data)
    if kind == "dict":
        return ("dict", tuple((e.name, _value_key(e.value)) for e in value.dict.entries))
    if kind == "tuple":
        return ("tuple", tuple(_value_key(v) for v in value.tuple.values))
    return (kind, value.SerializeToString(deterministic=True))


def _decode(value: pb.Value, space: Any) -> Any:
    """A Value as a value of `space` (Discrete values take the space's dtype, at any depth)."""
    from gymnasium import spaces as gs

    kind = value.WhichOneof("kind")
    if isinstance(space, gs.Dict) and kind == "dict":
        return {e.name: _decode(e.value, space.spaces.get(e.name)) for e in value.dict.entries}
    if isinstance(space, gs.Tuple) and kind == "tuple":
        subspaces = list(space.spaces)
        return tuple(
            _decode(v, subspaces[i] if i < len(subspaces) else None) for i, v in enumerate(value.tuple.values)
        )
    if kind == "discrete":
        dtype = space.dtype if isinstance(space, gs.Discrete) else np.int64
        return np.asarray(value.discrete, dtype=dtype)[()]
    if kind == "tensor":
        return array_from_tensor(value.tensor)
    if kind is None:
        raise ValueError("empty Value: no kind is set")
    raise ValueError(f"a {kind} value where {space} was expected")


def _invalid_actions(space: Any) -> list[tuple[str, pb.Value]]:
    """Values that are not actions of `space`, with a few words on each."""
    from gymnasium import spaces as gs

    from platform_contracts.values import tensor_from_array

    if isinstance(space, gs.Discrete):
        return [(f"{int(space.start + space.n)} of {space}", pb.Value(discrete=int(space.start + space.n)))]
    if isinstance(space, gs.Box):
        wrong = np.zeros((*space.shape, 2), dtype=space.dtype)
        invalid = [(f"shape {wrong.shape} for {space.shape}", pb.Value(tensor=tensor_from_array(wrong)))]
        high = np.asarray(space.high)
        if np.issubdtype(space.dtype, np.floating) and np.all(np.isfinite(high)) and high.size:
            above = (high + np.maximum(1.0, np.abs(high))).astype(space.dtype)
            invalid.append(("above the high bound", pb.Value(tensor=tensor_from_array(above))))
        return invalid
    if isinstance(space, gs.MultiDiscrete):
        beyond = np.asarray(space.start + space.nvec, dtype=space.dtype)
        return [("each component one past its range", pb.Value(tensor=tensor_from_array(beyond)))]
    if isinstance(space, gs.MultiBinary):
        twos = np.full(space.shape, 2, dtype=space.dtype)
        return [("2s in a MultiBinary", pb.Value(tensor=tensor_from_array(twos)))]
    if isinstance(space, gs.Dict):
        return [("an empty dict", pb.Value(dict=pb.DictValue()))]
    if isinstance(space, gs.Tuple):
        return [("an empty tuple", pb.Value(tuple=pb.TupleValue()))]
    return []


def _check_frame(frame: env_pb.Frame, where: str) -> tuple[int, int]:
    """Decode a frame and check it against its declared size; returns (width, height)."""
    if frame.width <= 0 or frame.height <= 0 or not frame.data:
        raise CheckFailed(
            f"{where}: no frame (width {frame.width}, height {frame.height}, {len(frame.data)} bytes)"
        )
    declared = (frame.width, frame.height)
    if frame.encoding == "rgb":
        if len(frame.data) != frame.width * frame.height * 3:
            raise CheckFailed(f"{where}: {len(frame.data)} bytes of rgb, not {frame.width}x{frame.height}x3")
        return declared
    if frame.encoding != "jpeg":
        raise CheckFailed(f"{where}: unknown frame encoding {frame.encoding!r} (expected 'jpeg' or 'rgb')")
    try:
        actual = _jpeg_size(frame.data)
    except Exception as exc:  # noqa: BLE001 - the server under test may fail in any way
        raise CheckFailed(f"{where}: the JPEG frame does not decode: {_one_line(exc)}") from None
    if actual != declared:
        raise CheckFailed(
            f"{where}: the JPEG frame is {actual[0]}x{actual[1]} but declares {declared[0]}x{declared[1]}"
        )
    return declared


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a JPEG: decoded with simplejpeg where installed, else read from its header."""
    try:
        import simplejpeg
    except ImportError:
        return _jpeg_header_size(data)
    pixels = simplejpeg.decode_jpeg(data, colorspace="RGB")
    return int(pixels.shape[1]), int(pixels.shape[0])


def _jpeg_header_size(data: bytes) -> tuple[int, int]:
    if data[:2] != b"\xff\xd8":
        raise ValueError("no JPEG start-of-image marker")
    offset = 2
    while offset + 4 <= len(data):
        if data[offset] != 0xFF:
            raise ValueError(f"a broken marker at byte {offset}")
        marker = data[offset + 1]
        length = int.from_bytes(data[offset + 2 : offset + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # start of frame
            height = int.from_bytes(data[offset + 5 : offset + 7], "big")
            width = int.from_bytes(data[offset + 7 : offset + 9], "big")
            return width, height
        offset += 2 + length
    raise ValueError("no start-of-frame marker")


def _short(value: Any, limit: int = 160) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=12, precision=4, separator=", ")
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
