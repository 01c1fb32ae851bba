"""Environment previews through the whole platform: made once by a real session, then served
from the gateway's cache (PLATFORM_CACHE_DIR); made ahead in the background
(PLATFORM_WARM_PREVIEWS) without holding up a session start."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import simplejpeg
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for

CATALOG = """
[envs.lake-text]
gymnasium_id = "FrozenLake-v1"
description = "FrozenLake drawn as text only"
kwargs = { render_mode = "ansi" }
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("previews")
    catalog = root / "catalog.toml"
    catalog.write_text(textwrap.dedent(CATALOG))
    extra_env = {"PLATFORM_CATALOG": str(catalog), "PLATFORM_CACHE_DIR": str(root / "cache")}
    with running_platform(root / "platform", extra_env=extra_env) as stack:
        assert stack.cache_dir == root / "cache"
        yield stack


@pytest.fixture
def http(stack: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=120) as client:
        yield client


def _listed(http: httpx.Client) -> dict[str, dict]:
    return {e["id"]: e for e in http.get("/v0/envs").json()["data"]}


def _session_count(http: httpx.Client) -> int:
    return http.get("/v0/sessions", params={"include_closed": True}).json()["count"]


def test_a_preview_is_made_by_one_session_then_served_from_the_cache(stack, http):
    cartpole = _listed(http)["cartpole"]
    assert cartpole["preview"] == "/v0/envs/cartpole/preview" and cartpole["preview_cached"] is False
    sessions_before = _session_count(http)

    response = http.get(cartpole["preview"])
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/jpeg"
    assert response.headers["cache-control"] == "max-age=86400"
    assert simplejpeg.decode_jpeg(response.content).shape == (400, 600, 3)
    files = list((stack.cache_dir / "previews").glob("cartpole-*.jpg"))
    assert len(files) == 1 and files[0].read_bytes() == response.content
    assert _listed(http)["cartpole"]["preview_cached"] is True

    sessions_after = http.get("/v0/sessions", params={"include_closed": True}).json()["data"]
    assert len(sessions_after) == sessions_before + 1
    preview_session = next(s for s in sessions_after if s["env_id"] == "cartpole")
    assert preview_session["state"] == "closed" and preview_session["record"] is False
    assert not http.get("/v0/sessions").json()["data"], "no session is left running"

    again = http.get(cartpole["preview"])
    assert again.status_code == 200 and again.content == response.content
    assert _session_count(http) == sessions_before + 1, "served from the cache, no new session"


def test_an_unknown_env_is_a_404_naming_it(http):
    response = http.get("/v0/envs/no-such-env/preview")
    assert response.status_code == 404
    assert "no-such-env" in response.json()["detail"]


def test_an_env_that_renders_nothing_is_a_404_and_is_not_started_again(stack, http):
    sessions_before = _session_count(http)
    for _ in range(2):
        response = http.get("/v0/envs/lake-text/preview")
        assert response.status_code == 404
        assert response.json()["detail"] == "lake-text renders no frames (render mode 'ansi')"
    assert _session_count(http) == sessions_before + 1, "the second answer came from the marker file"
    assert list((stack.cache_dir / "previews").glob("lake-text-*.noframes"))
    assert _listed(http)["lake-text"]["preview_cached"] is False


GATED_ENV = '''
import time
from pathlib import Path

import gymnasium as gym
import numpy as np


class Gated(gym.Env):
    """A picture that can only be taken once the test opens the gate (a file appears)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, gate, render_mode="rgb_array"):
        self.gate = Path(gate)
        self.render_mode = render_mode
        self.observation_space = gym.spaces.Discrete(2)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        Path(str(self.gate) + ".waiting").touch()
        while not self.gate.exists():
            time.sleep(0.05)
        return 0, {}

    def step(self, action):
        return 0, 0.0, True, False, {}

    def render(self):
        return np.full((24, 32, 3), 200, dtype=np.uint8)


def make_env(**kwargs):
    return Gated(**kwargs)
'''


def _sessions_by_env(http: httpx.Client) -> dict[str, int]:
    sessions = http.get("/v0/sessions", params={"include_closed": True}).json()["data"]
    return dict(Counter(s["env_id"] for s in sessions))


def _cached_previews(stack: PlatformStack) -> set[str]:
    return {path.name.rsplit("-", 1)[0] for path in (stack.cache_dir / "previews").glob("*.jpg")}


def test_previews_are_made_ahead_one_at_a_time_and_a_session_start_does_not_wait_for_them(tmp_path):
    envs = tmp_path / "gated_envs"
    envs.mkdir()
    (envs / "gated_env.py").write_text(GATED_ENV)
    gate = tmp_path / "gate"
    catalog = tmp_path / "catalog.toml"
    catalog.write_text(textwrap.dedent(f"""
        [envs.gated]
        factory = "gated_env:make_env"
        path = "{envs}"
        description = "a preview that waits for the test"
        kwargs = {{ gate = "{gate}" }}
        """))
    extra_env = {"PLATFORM_CATALOG": str(catalog), "PLATFORM_WARM_PREVIEWS": "gated,cartpole"}
    with running_platform(tmp_path / "platform", extra_env=extra_env) as stack, \
            httpx.Client(base_url=stack.url, timeout=120) as http:
        # Nobody asks for a preview: the gateway starts on its own, with the first listed one.
        wait_for(lambda: Path(f"{gate}.waiting").exists(), timeout=90, what="the warmer to start the gated preview")
        assert _sessions_by_env(http) == {"gated": 1}

        created = http.post("/v0/sessions", json={"env_id": "pendulum"})
        assert created.status_code == 201, created.text  # while the gated preview is still being made
        assert not gate.exists() and _cached_previews(stack) == set()
        assert _sessions_by_env(http) == {"gated": 1, "pendulum": 1}, "one preview at a time"
        assert http.delete(f"/v0/sessions/{created.json()['id']}").status_code == 200

        gate.touch()
        wait_for(lambda: _cached_previews(stack) == {"gated", "cartpole"}, timeout=90,
                 what="both previews to be made in the background")
        listed = _listed(http)
        assert listed["gated"]["preview_cached"] is True and listed["cartpole"]["preview_cached"] is True
        assert listed["acrobot"]["preview_cached"] is False, "only the listed entries are made ahead"
        wait_for(lambda: not http.get("/v0/sessions").json()["data"], timeout=30, what="the preview sessions to close")
        assert _sessions_by_env(http) == {"gated": 1, "pendulum": 1, "cartpole": 1}
