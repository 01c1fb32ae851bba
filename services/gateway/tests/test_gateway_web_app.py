"""The web app served at `/`: its files, their caching, client-side routes falling back to
index.html, the API's paths untouched, and the page shown when the app is not built."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from platform_gateway.app import api_app
from platform_gateway.web_app import LONG_CACHE, mount, where

INDEX = '<!doctype html><html><head><script type="module" src="/assets/index-AbC123.js"></script></head></html>'


def write_build(dist: Path) -> Path:
    """A build as `vite build` lays it out: index.html, hashed assets, a public file, the stamp."""
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(INDEX)
    (dist / "assets" / "index-AbC123.js").write_text("console.log('app');\n")
    (dist / "assets" / "index-AbC123.css").write_text("body { margin: 0 }\n")
    (dist / "robots.txt").write_text("User-agent: *\n")
    (dist / ".build-stamp").write_text("0123abcd\n")
    return dist


def client_for(dist: Path) -> httpx.AsyncClient:
    app = api_app(None)
    mount(app, dist)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")


@pytest.fixture
async def web(tmp_path: Path):
    async with client_for(write_build(tmp_path / "dist")) as client:
        yield client


async def test_the_root_is_the_app_and_never_cached(web) -> None:
    response = await web.get("/")
    assert response.status_code == 200
    assert response.text == INDEX
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-cache"
    assert (await web.get("/index.html")).text == INDEX


async def test_hashed_assets_are_cached_for_a_year(web) -> None:
    script = await web.get("/assets/index-AbC123.js")
    assert script.status_code == 200 and script.text == "console.log('app');\n"
    assert script.headers["content-type"].startswith("text/javascript")
    assert script.headers["cache-control"] == LONG_CACHE == "public, max-age=31536000, immutable"
    style = await web.get("/assets/index-AbC123.css")
    assert style.headers["content-type"].startswith("text/css") and style.headers["cache-control"] == LONG_CACHE


async def test_other_files_of_the_build_are_revalidated(web) -> None:
    robots = await web.get("/robots.txt")
    assert robots.status_code == 200 and robots.text == "User-agent: *\n"
    assert robots.headers["cache-control"] == "no-cache"


async def test_a_current_copy_is_answered_304(web) -> None:
    first = await web.get("/")
    again = await web.get("/", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize("path", ["/sessions/s-123", "/recordings", "/recordings/abc?episode=3&step=120",
                                  "/some/page/the/app/does/not/know", "/docsearch", "/v0nly"])
async def test_client_side_routes_fall_back_to_the_app(web, path: str) -> None:
    response = await web.get(path)
    assert response.status_code == 200, path
    assert response.text == INDEX
    assert response.headers["cache-control"] == "no-cache"


async def test_head_answers_like_get_without_a_body(web) -> None:
    response = await web.head("/recordings/abc")
    assert response.status_code == 200 and response.content == b""
    assert int(response.headers["content-length"]) == len(INDEX)


async def test_a_missing_asset_is_404_not_the_app(web, tmp_path: Path) -> None:
    response = await web.get("/assets/index-OldHash.js")
    assert response.status_code == 404
    assert "/assets/index-OldHash.js is not in the web app's build" in response.text
    assert "<html" not in response.text
    assert str(tmp_path) not in response.text  # no path on the server


@pytest.mark.parametrize("path", ["/.build-stamp", "/assets/../../secret.txt", "/%2e%2e/secret.txt"])
async def test_hidden_files_and_paths_outside_the_build_are_not_served(web, tmp_path: Path, path: str) -> None:
    (tmp_path / "secret.txt").write_text("outside the build")
    response = await web.get(path)
    assert "outside the build" not in response.text and "0123abcd" not in response.text
    assert response.status_code in (200, 404), response.status_code  # the app's fallback, or a missing asset


async def test_the_api_keeps_its_own_answers(web) -> None:
    unknown = await web.get("/v0/nope")
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": "no route GET /v0/nope (the routes are in /docs)", "code": "not_found"}
    assert (await web.get("/v0")).json()["code"] == "not_found"
    assert "swagger" in (await web.get("/docs")).text.lower()
    assert "redoc" in (await web.get("/redoc")).text.lower()
    document = (await web.get("/openapi.json")).json()
    assert "/v0/envs" in document["paths"] and "/" not in document["paths"]
    wrong_method = await web.post("/sessions/s-1")
    assert wrong_method.status_code == 404 and wrong_method.json()["code"] == "not_found"


async def test_the_openapi_document_is_the_api_apps(tmp_path: Path) -> None:
    async with client_for(write_build(tmp_path / "dist")) as client:
        served = (await client.get("/openapi.json")).json()
    assert served == api_app(None).openapi()


async def test_without_a_build_the_app_says_how_to_build_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    async with client_for(empty) as client:
        for path in ("/", "/sessions/s-1", "/assets/index-AbC123.js"):
            response = await client.get(path)
            assert response.status_code == 503, path
            assert response.headers["cache-control"] == "no-store"
            assert "The web app is not built" in response.text
            assert "Node.js 20" in response.text and "make run" in response.text
            assert "npm ci &amp;&amp; npm run build" in response.text
            assert "PLATFORM_WEB_DIST" in response.text and str(tmp_path) not in response.text
        assert (await client.get("/v0/nope")).status_code == 404  # the API is unchanged


async def test_a_build_made_while_the_gateway_runs_is_served(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    async with client_for(dist) as client:
        assert (await client.get("/")).status_code == 503
        write_build(dist)
        assert (await client.get("/")).text == INDEX


def test_the_gateway_says_where_the_app_is(tmp_path: Path) -> None:
    app = api_app(None)
    built = mount(app, write_build(tmp_path / "dist"))
    assert where(built, "http://127.0.0.1:8000") == f"web app at http://127.0.0.1:8000/ (from {tmp_path / 'dist'})"
    missing = mount(api_app(None), tmp_path / "nothing")
    line = where(missing, "http://127.0.0.1:8000")
    assert line.startswith("web app not built") and "Node.js 20+" in line and "make run" in line


async def test_the_running_gateway_serves_the_app_from_its_setting(start_gateway, tmp_path: Path) -> None:
    gateway = await start_gateway(web_dist=write_build(tmp_path / "dist"))
    page = await gateway.http.get("/recordings/abc")
    assert page.status_code == 200 and page.text == INDEX
    assert (await gateway.http.get("/v0/nope")).json()["code"] == "not_found"
    assert (await gateway.http.get("/healthz")).json()["ok"] is True
