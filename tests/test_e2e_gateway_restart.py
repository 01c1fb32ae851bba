"""Killing the gateway drops connections, and the SDK reconnects to the same session.

One platform of real processes (`platform_testing`), its gateway killed and started again on
the same port, as the launcher's supervision does. The environment, `ticker`, counts its steps
since the reset in its observation, so a step lost or run twice shows:

- a step after the gateway went (SIGKILL or SIGTERM) is sent again on a new connection and
  runs once, without the agent seeing anything; a vector session does the same;
- a step while the gateway is still down waits (with back-off) until it is back;
- a hold in flight when the gateway dies may have run: `OutcomeUnknownError` names the session,
  the environment and the request; the session goes on (the hold did run, once).

These sessions step over the gateway (`PLATFORM_DIRECT=0`); one on the direct path does not
notice the gateway going at all.
"""

from __future__ import annotations

import signal
import textwrap
import threading
import time
from collections.abc import Iterator

import numpy as np
import platform_sdk
import pytest
from platform_testing.platform import PlatformStack, running_platform

pytestmark = pytest.mark.timeout(600)
RECONNECT_S = 120.0  # a gateway's start on a busy 2-core machine, with room to spare

TICKER = '''
import time

import gymnasium as gym
import numpy as np


class Ticker(gym.Env):
    """Its observation is the number of steps since the reset; each step takes `step_s` s."""

    observation_space = gym.spaces.Box(0.0, np.inf, (1,), np.float64)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, step_s=0.0, render_mode=None):
        self.step_s, self.render_mode, self.count = step_s, render_mode, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.count = 0
        return np.array([0.0]), {}

    def step(self, action):
        if self.step_s:
            time.sleep(self.step_s)
        self.count += 1
        return np.array([float(self.count)]), 1.0, False, False, {}

    def render(self):
        return np.zeros((8, 8, 3), dtype=np.uint8)


def make_env(render_mode=None, step_s=0.0):
    return Ticker(step_s=step_s, render_mode=render_mode)
'''


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("gateway-restart")
    (root / "test_envs").mkdir()
    (root / "test_envs" / "ticker_env.py").write_text(TICKER)
    catalog = root / "catalog.toml"
    catalog.write_text(textwrap.dedent("""
        [envs.ticker]
        factory = "ticker_env:make_env"
        path = "./test_envs"
        description = "Counts its steps"
        options.step_s = { type = "float", default = 0.0, minimum = 0.0, help = "Seconds each step takes." }
    """))
    with running_platform(root / "platform", extra_env={"PLATFORM_CATALOG": str(catalog)}) as stack:
        yield stack


@pytest.fixture(autouse=True)
def _through_the_gateway(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is tested here is the gateway's WebSocket: not the direct path (the SDK's default)."""
    monkeypatch.setenv("PLATFORM_DIRECT", "0")


def test_a_direct_session_steps_on_while_the_gateway_is_down(stack: PlatformStack) -> None:
    with platform_sdk.connect("ticker", url=stack.url, reconnect_timeout=RECONNECT_S, direct=True) as env:
        assert env.step_path == "direct"
        env.reset(seed=0)
        env.step(0)
        stack.kill("gateway", signal.SIGKILL)
        try:
            for expected in range(2, 12):
                assert env.step(0)[0][0] == expected
            assert env.hold(0, 10, frames=False).observation[0] == 21
        finally:
            stack.start_service("gateway")
        assert env.step_path == "direct"


def _restart_gateway(stack: PlatformStack, sig: int = signal.SIGKILL) -> None:
    pid = stack.pid("gateway")
    stack.kill("gateway", sig)
    stack.start_service("gateway")  # the same port; waits until it answers
    assert stack.pid("gateway") not in (None, pid)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_step_after_the_gateway_restarted_runs_once(stack: PlatformStack, sig: int) -> None:
    with platform_sdk.connect("ticker", url=stack.url, reconnect_timeout=RECONNECT_S) as env:
        env.reset(seed=0)
        for _ in range(3):
            obs, *_ = env.step(0)
        assert obs[0] == 3
        _restart_gateway(stack, sig)
        obs, reward, *_ = env.step(1)
        assert obs[0] == 4 and reward == 1.0, "sent again on the new connection, run once"
        assert env.step(0)[0][0] == 5
        assert env.hold(0, 10, frames=False).observation[0] == 15


def test_a_step_waits_for_a_gateway_that_is_not_back_yet(stack: PlatformStack) -> None:
    with platform_sdk.connect("ticker", url=stack.url, reconnect_timeout=RECONNECT_S) as env:
        env.reset(seed=0)
        env.step(0)
        stack.kill("gateway", signal.SIGKILL)
        starter = threading.Timer(2.0, stack.start_service, args=("gateway",))
        started = time.monotonic()
        starter.start()
        try:
            obs, *_ = env.step(0)  # connection refused, again and again, until the gateway is back
        finally:
            starter.join()
        assert time.monotonic() - started >= 2.0
        assert obs[0] == 2


def test_a_vector_session_reconnects_too(stack: PlatformStack) -> None:
    with platform_sdk.make_vec("ticker", 3, url=stack.url, reconnect_timeout=RECONNECT_S) as envs:
        envs.reset(seed=0)
        envs.step(np.zeros(3, dtype=np.int64))
        _restart_gateway(stack)
        obs, rewards, *_ = envs.step(np.ones(3, dtype=np.int64))
        assert obs[:, 0].tolist() == [2.0, 2.0, 2.0] and rewards.tolist() == [1.0, 1.0, 1.0]


def test_a_hold_in_flight_when_the_gateway_dies_has_an_unknown_outcome(stack: PlatformStack) -> None:
    with platform_sdk.connect("ticker", url=stack.url, kwargs={"step_s": 0.01},
                              reconnect_timeout=RECONNECT_S) as env:
        env.reset(seed=0)
        pending = env.hold(0, 300, frames=False, wait=False)  # about 3 s
        time.sleep(0.5)
        _restart_gateway(stack)
        with pytest.raises(platform_sdk.OutcomeUnknownError) as caught:
            pending.result()
        message = str(caught.value)
        assert f"session {env.session_id} (ticker), hold after step 0" in message
        assert "outcome is unknown" in message and caught.value.session_id == env.session_id
        # The session goes on; the hold did run, once, on the env host while the gateway was away.
        assert env.step(0)[0][0] == 301


def test_after_the_restarts_new_sessions_work_and_no_service_died_unasked(stack: PlatformStack) -> None:
    stack.check()
    with platform_sdk.connect("ticker", url=stack.url) as env:
        env.reset(seed=0)
        assert env.step(0)[0][0] == 1
