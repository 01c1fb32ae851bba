"""The gateway serves the web app: `/` and the app's deep links load it in a real browser
without console errors, the API's paths keep their own answers, and a platform without a build
says at `/` how to build it."""

from __future__ import annotations

import re

import httpx
from platform_testing.platform import running_platform
from playwright.sync_api import Page, expect

NOT_FOUND_BY_THE_API = r"Failed to load resource: the server responded with a status of (404|422)"


def expect_the_app_shell(page: Page) -> None:
    """The app's own shell ran (React rendered the header and its navigation)."""
    expect(page.locator(".brand")).to_have_text("Simulusion")
    navigation = page.get_by_role("navigation", name="Main")
    expect(navigation.get_by_role("link", name="Environments")).to_be_visible()
    expect(navigation.get_by_role("link", name="Recordings")).to_be_visible()


def test_the_root_loads_the_app_without_console_errors(page: Page, console, screenshot) -> None:
    response = page.goto("/")
    assert response is not None and response.status == 200
    assert response.headers["cache-control"] == "no-cache"
    expect(page).to_have_title("Simulusion")
    expect_the_app_shell(page)
    expect(page.get_by_role("heading", level=1)).to_be_visible()  # the Environments page rendered
    assert screenshot(page, "serving-root").stat().st_size > 0
    assert not console.problems, console.problems  # also checked after every test


def test_the_apps_assets_are_cached_and_index_is_not(web_platform) -> None:
    index = httpx.get(f"{web_platform.url}/", timeout=10)
    scripts = re.findall(r'src="(/assets/[^"]+\.js)"', index.text)
    assert scripts, index.text
    asset = httpx.get(f"{web_platform.url}{scripts[0]}", timeout=10)
    assert asset.status_code == 200 and asset.headers["content-type"].startswith("text/javascript")
    assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
    missing = httpx.get(f"{web_platform.url}/assets/index-NotThere.js", timeout=10)
    assert missing.status_code == 404 and "<html" not in missing.text


def test_deep_links_load_the_app(page: Page, console) -> None:
    console.allow(NOT_FOUND_BY_THE_API)  # the pages ask the API for a recording and a session that do not exist
    for path in ("/recordings/abc", "/recordings/abc?episode=3&step=120", "/sessions/x", "/recordings",
                 "/no/such/page"):
        response = page.goto(path)
        assert response is not None and response.status == 200, path
        assert response.headers["content-type"].startswith("text/html"), path
        expect_the_app_shell(page)
        assert page.evaluate("location.pathname + location.search") == path  # no redirect: the app's router has it


def test_the_api_keeps_its_own_answers(web_platform) -> None:
    url = web_platform.url
    envs = httpx.get(f"{url}/v0/envs", timeout=10)
    assert envs.status_code == 200 and envs.headers["content-type"] == "application/json"
    ids = {entry["id"] for entry in envs.json()["data"]}
    assert {"cartpole", "levels"} <= ids  # the built-ins and the test catalog
    document = httpx.get(f"{url}/openapi.json", timeout=10).json()
    assert "/v0/envs" in document["paths"] and "/" not in document["paths"]
    unknown = httpx.get(f"{url}/v0/nope", timeout=10)
    assert unknown.status_code == 404
    assert unknown.json() == {"detail": "no route GET /v0/nope (the routes are in /docs)", "code": "not_found"}
    assert httpx.get(f"{url}/healthz", timeout=10).json()["ok"] is True
    # FastAPI's pages, not the app (over HTTP: their scripts come from a CDN this machine cannot reach)
    docs = httpx.get(f"{url}/docs", timeout=10)
    assert docs.status_code == 200 and 'id="swagger-ui"' in docs.text and 'id="root"' not in docs.text
    redoc = httpx.get(f"{url}/redoc", timeout=10)
    assert redoc.status_code == 200 and "redoc" in redoc.text.lower() and 'id="root"' not in redoc.text


def test_without_a_build_the_root_says_how_to_build_it(open_page, console, tmp_path, screenshot) -> None:
    empty = tmp_path / "no-build"
    empty.mkdir()
    with running_platform(tmp_path / "platform", services=("broker", "gateway"),
                          extra_env={"PLATFORM_WEB_DIST": str(empty)}) as stack:
        assert f"web app not built (no {empty / 'index.html'})" in stack.log("gateway")
        assert httpx.get(f"{stack.url}/v0/envs", timeout=10).status_code == 200
        console.allow(r"status of 503")  # Chromium logs the 503 answer itself
        shown = open_page(stack.url)
        for path in ("/", "/recordings/abc"):
            response = shown.goto(path)
            assert response is not None and response.status == 503, path
            expect(shown.get_by_role("heading", level=1)).to_have_text("The web app is not built")
            expect(shown.locator("body")).to_contain_text("install Node.js 20 or newer")
            expect(shown.locator("pre")).to_have_text("cd web && npm ci && npm run build")
        screenshot(shown, "serving-not-built")
