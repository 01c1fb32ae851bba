"""The compliance suite finds each kind of fault, and passes a compliant server.

The environment server is the SDK's (another package), so these tests use a small in-test
stand-in (`StandIn`) that answers EnvRequests from a Gymnasium environment the way the
protocol says, with faults that can be switched on one at a time.
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import simplejpeg
from gymnasium import spaces
from platform_contracts import compliance
from platform_contracts.compliance import (
    CHECKS,
    CheckResult,
    ComplianceOptions,
    EnvironmentComplianceTests,
    run_all,
    run_check,
)
from platform_contracts.compliance.frames import check_frame, jpeg_header_size
from platform_contracts.spaces import encode_value, space_to_proto
from platform_contracts.values import datamap_from_dict, python_from_value
from simulusion.env.v1 import environment_pb2 as env_pb

OPTIONS = ComplianceOptions(seed=7, steps=12, snapshot_steps=6, warmup_steps=2)


class Walk(gym.Env):
    """A noisy walk on a line; `faults` breaks it in named ways."""

    metadata = {"render_modes": ["rgb_array"]}  # noqa: RUF012 - Gymnasium's convention

    def __init__(self, faults: frozenset[str] = frozenset()) -> None:
        self.faults = faults
        self.observation_space = spaces.Box(-10.0, 10.0, (2,), np.float32)
        self.action_space = spaces.Discrete(3)
        self.render_mode = "rgb_array"
        self.x, self.t = 0.0, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=None if "unseeded" in self.faults else seed)
        self.x, self.t = float(self.np_random.uniform(-1, 1)), 0
        return self._obs(), {"x": self.x}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.x += (int(action) - 1) * 0.5 + float(self.np_random.normal(0, 0.1))
        self.t += 1
        return self._obs(), -abs(self.x), abs(self.x) > 9, self.t >= 40, {}

    def render(self) -> np.ndarray:
        height = 8 + (self.t if "frame_size_changes" in self.faults else 0)
        frame = np.zeros((height, 16, 3), dtype=np.uint8)
        frame[..., 0] = int(abs(self.x) * 25) % 256
        return frame

    def _obs(self) -> np.ndarray:
        if "leaves_space" in self.faults and self.t >= 3:
            return np.array([100.0, 0.0], dtype=np.float32)
        return np.array([self.x, self.t / 40], dtype=np.float32)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if "restore_loses_rng" in self.faults:
            state["_np_random"] = None  # a restored env draws from a fresh, unseeded generator
        return state


class Pick(gym.Env):
    """Dict observations (with a Discrete inside), MultiDiscrete actions, no frames."""

    def __init__(self) -> None:
        self.observation_space = spaces.Dict(
            {"where": spaces.Box(0.0, 1.0, (3,), np.float64), "mode": spaces.Discrete(4, start=1)}
        )
        self.action_space = spaces.MultiDiscrete([3, 2])
        self.render_mode = None
        self.state = np.zeros(3)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.state = self.np_random.uniform(0, 1, 3)
        return {"where": self.state.copy(), "mode": 1}, {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.state = np.clip(self.state + (np.asarray(action).sum() - 1.5) * 0.1, 0, 1)
        return {"where": self.state.copy(), "mode": int(action[0]) + 1}, float(self.state[0]), False, False, {}


class StandIn:
    """Stands in for the SDK's environment server: `call(EnvRequest) -> EnvResponse`."""

    def __init__(self, env: gym.Env, faults: frozenset[str] = frozenset()) -> None:
        self.env, self.faults = env, faults
        self.snapshots: dict[str, Any] = {}
        self.broken = False
        self.last_obs: Any = None

    def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        if self.broken:
            raise ConnectionError("the stream is closed")
        response = env_pb.EnvResponse(id=request.id)
        command = request.WhichOneof("command")
        env = self.env
        if command == "spec":
            response.spec.env_id = "walk"
            response.spec.observation_space.CopyFrom(space_to_proto(env.observation_space))
            response.spec.action_space.CopyFrom(space_to_proto(env.action_space))
            response.spec.render_mode = env.render_mode or ""
        elif command == "reset":
            seed = request.reset.seed if request.reset.HasField("seed") else None
            obs, info = env.reset(seed=seed)
            self.last_obs = encode_value(obs, env.observation_space)
            response.reset.observation.CopyFrom(self.last_obs)
            response.reset.info.CopyFrom(datamap_from_dict(info))
            if request.reset.render:
                response.reset.frame.CopyFrom(self._frame())
        elif command == "step":
            action = python_from_value(request.step.action) if request.step.action.WhichOneof("kind") else None
            if action is None or not env.action_space.contains(action):
                if "breaks_on_invalid" in self.faults:
                    self.broken = True
                if "accepts_invalid" not in self.faults:
                    code = env_pb.ERROR_CODE_INTERNAL if "wrong_code" in self.faults else env_pb.ERROR_CODE_INVALID_ACTION
                    response.error.code, response.error.message = code, "not an action"
                    return response
                action = env.action_space.sample()
            obs, reward, terminated, truncated, info = env.step(action)
            self.last_obs = encode_value(obs, env.observation_space)
            response.step.observation.CopyFrom(self.last_obs)
            response.step.reward, response.step.terminated, response.step.truncated = reward, terminated, truncated
            if request.step.render:
                response.step.frame.CopyFrom(self._frame())
        elif command == "snapshot":
            handle = f"s{len(self.snapshots)}"
            self.snapshots[handle] = copy.deepcopy((env, self.last_obs))  # as a pickle would
            response.snapshot.handle = handle
        elif command == "restore":
            self.env, self.last_obs = copy.deepcopy(self.snapshots[request.restore.handle])
            response.restore.observation.CopyFrom(self.last_obs)
        elif command == "render":
            response.render.frame.CopyFrom(self._frame())
        return response

    def _frame(self) -> env_pb.Frame:
        frame = self.env.render()
        return env_pb.Frame(encoding="rgb", width=frame.shape[1], height=frame.shape[0], data=frame.tobytes())


def results_by_name(results: list[CheckResult]) -> dict[str, CheckResult]:
    return {r.name: r for r in results}


def test_a_compliant_server_passes_every_check():
    results = run_all(StandIn(Walk()), OPTIONS)
    assert [r.name for r in results] == list(CHECKS)
    assert all(r.passed and not r.skipped for r in results), results
    by_name = results_by_name(results)
    assert "walk" in by_name["spec"].message
    assert "frames" in by_name["snapshot"].message
    assert "all 16x8 (rgb)" in by_name["render"].message


def test_dict_observations_and_multi_discrete_actions_pass_and_render_is_skipped():
    results = results_by_name(run_all(StandIn(Pick()), OPTIONS))
    assert all(r.passed for r in results.values()), results
    assert results["render"].skipped and results["render"].status == "SKIP"
    assert "renders no frames" in results["render"].message
    assert "each component one past its range" in results["invalid_action"].message


@pytest.mark.parametrize(
    ("env_faults", "server_faults", "failing", "needle"),
    [
        ({"leaves_space"}, set(), {"observations"}, "is not in Box"),
        ({"unseeded"}, set(), {"seeding"}, "differs"),
        ({"restore_loses_rng"}, set(), {"snapshot"}, "after the first restore"),
        ({"frame_size_changes"}, set(), {"render"}, "the frame of step 1 is 16x9, the frame of reset(render=True) was 16x8"),
        (set(), {"accepts_invalid"}, {"invalid_action"}, "was accepted"),
        (set(), {"wrong_code"}, {"invalid_action"}, "ERROR_CODE_INTERNAL, not ERROR_CODE_INVALID_ACTION"),
        (set(), {"breaks_on_invalid"}, {"invalid_action"}, "the connection failed"),
    ],
)
def test_each_fault_fails_its_check_and_names_it(env_faults, server_faults, failing, needle):
    server = StandIn(Walk(frozenset(env_faults)), frozenset(server_faults))
    names = [n for n in CHECKS if n != "invalid_action"] + ["invalid_action"]  # a broken stream last
    results = results_by_name(run_all(server, OPTIONS, names))
    failed = {name for name, result in results.items() if not result.passed}
    assert failed == failing, results
    messages = " | ".join(results[name].message for name in failing)
    assert needle in messages


def test_a_broken_connection_fails_every_check_with_the_cause():
    server = StandIn(Walk())
    server.broken = True
    results = run_all(server, OPTIONS)
    assert not any(r.passed for r in results)
    assert all("the connection failed on spec: ConnectionError: the stream is closed" in r.message for r in results)


def test_a_response_with_the_wrong_id_fails():
    class Renumbering(StandIn):
        def call(self, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
            response = super().call(request)
            response.id += 1
            return response

    result = run_check("spec", Renumbering(Walk()), OPTIONS)
    assert not result.passed and "response id" in result.message


def test_jpeg_frames_are_decoded_and_their_size_checked():
    pixels = np.zeros((24, 40, 3), dtype=np.uint8)
    data = simplejpeg.encode_jpeg(pixels, quality=80, colorspace="RGB")
    assert jpeg_header_size(data) == (40, 24)
    assert check_frame(env_pb.Frame(encoding="jpeg", width=40, height=24, data=data), "x") == (40, 24)
    with pytest.raises(compliance.CheckFailed, match="is 40x24 but declares 41x24"):
        check_frame(env_pb.Frame(encoding="jpeg", width=41, height=24, data=data), "x")
    with pytest.raises(compliance.CheckFailed, match="does not decode"):
        check_frame(env_pb.Frame(encoding="jpeg", width=40, height=24, data=b"\xff\xd8junk"), "x")


class TestTheAbstractSuite(EnvironmentComplianceTests):
    """The abstract pytest class, given a connection to a compliant stand-in."""

    compliance_options = OPTIONS

    @pytest.fixture(scope="class")
    @classmethod
    def connection(cls) -> StandIn:
        return StandIn(Walk())
