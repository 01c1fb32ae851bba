"""Environment previews through the whole platform: made once by a real session, then served
from the gateway's cache (PLATFORM_CACHE_DIR)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import httpx
import pytest
import simplejpeg
from platform_testing.platform import PlatformStack, running_platform

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
